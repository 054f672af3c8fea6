package coord

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An operator's park stops the session without charging its attempt: after
// unpark the task relaunches as the same attempt.
func TestParkOfARunningTaskDoesNotChargeTheAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Behave: agent.BehaveStall}}}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	first := b.waitEvent(t, 60*time.Second, kindIs(task.EvTaskLeased))
	require.Contains(t, first.Text, "attempt 1")
	b.waitEvent(t, 60*time.Second, kindIs(task.EvSessionConfirmed))
	_, err := b.c.Do(context.Background(), Command{Kind: CmdPark, TaskID: id, Author: "op"})
	require.NoError(t, err)
	parked := b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskParked))
	require.Contains(t, parked.Text, "Attempt 1 of phase implement is not counted")
	b.waitEvent(t, 10*time.Second, kindIs(task.EvSessionExited))
	_, err = b.c.Do(context.Background(), Command{Kind: CmdUnpark, TaskID: id, Author: "op"})
	require.NoError(t, err)
	again := b.waitEvent(t, 60*time.Second, kindIs(task.EvTaskLeased))
	require.Contains(t, again.Text, "attempt 1", b.dump())
}

// With no engine running, the CLI's commands go through the coordinator's
// own code: the same transition and the same event text.
func TestApplyOfflineUsesTheEnginesTransitionsAndTexts(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, nil)
	b.stop()
	c, err := New(Params{Store: b.st, Repo: b.repo, Config: b.cfg})
	require.NoError(t, err)
	ctx := context.Background()
	res, err := c.ApplyOffline(ctx, Command{Kind: CmdAdd, Author: "op", Task: &task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand, Harness: "scripted",
	}})
	require.NoError(t, err)
	id := res.TaskID
	_, err = c.ApplyOffline(ctx, Command{Kind: CmdCorrect, TaskID: id, Text: "keep Add pure", Author: "op"})
	require.NoError(t, err)
	_, err = c.ApplyOffline(ctx, Command{Kind: CmdPark, TaskID: id, Author: "op"})
	require.NoError(t, err)
	_, err = c.ApplyOffline(ctx, Command{Kind: CmdExtend, TaskID: id, Author: "op"})
	require.ErrorContains(t, err, "needs a running engine")
	got, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateParked, got.State)
	evs := b.ledger(t, id, func(task.Event) bool { return true })
	var texts []string
	for _, e := range evs {
		texts = append(texts, e.Text)
	}
	require.Contains(t, texts, "Task added: Fix calc (frame → research → plan → implement → review, harness scripted).")
	require.Contains(t, texts, "Human decision by op: keep Add pure")
	require.Contains(t, texts, "Parked by op.")
}
