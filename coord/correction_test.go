package coord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A correction reaches a live agent exactly once; after a console restart
// nothing is typed again, and the next session's brief carries the
// decision above the plan.
func TestCorrectionDeliveredOnceAndOutranksThePlanAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	ctx := context.Background()
	delivered := b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))
	b.waitRecord(t, 10*time.Second, "the first brief", func() bool { return b.recordedBrief(task.PhaseImplement, 1, 1) != "" })

	const text = "Use multiplication for Mul; do not special-case zero."
	res, err := b.c.Do(ctx, Command{Kind: CmdCorrect, TaskID: id, Text: text, Author: "ana"})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	require.Equal(t, delivered.SessionID, res.SessionID)
	require.Contains(t, res.Message, short(delivered.SessionID))
	b.waitRecord(t, 10*time.Second, "the decision", func() bool { return len(b.inputsOf(t, agent.InputDecision)) > 0 })
	decisions := b.inputsOf(t, agent.InputDecision)
	require.Len(t, decisions, 1)
	require.Equal(t, task.DecisionHeader+" "+text, decisions[0].Text)
	dels, err := b.st.DeliveryList(ctx, id)
	require.NoError(t, err)
	require.Len(t, dels, 1)
	require.Equal(t, delivered.SessionID, dels[0].SessionID)

	b.stop()
	b.start(t)
	b.waitRecord(t, 30*time.Second, "the relaunched brief", func() bool { return b.recordedBrief(task.PhaseImplement, 1, 2) != "" })
	require.Len(t, b.inputsOf(t, agent.InputDecision), 1, "nothing was typed again after the restart")
	dels, err = b.st.DeliveryList(ctx, id)
	require.NoError(t, err)
	require.Len(t, dels, 1, "the new session got the decision through its brief, not typed")

	brief := b.recordedBrief(task.PhaseImplement, 1, 2)
	dec := section(t, brief, task.HeadingDecisions, task.HeadingPhasePrefix)
	require.Contains(t, dec, text)
	require.Contains(t, dec, "ana")
	require.Less(t, strings.Index(brief, task.HeadingDecisions), strings.Index(brief, task.HeadingPlan), "decisions outrank the plan")
}

// A correction for a task with no live session is stored and waits for
// the next brief.
func TestCorrectionWithoutSessionIsQueuedForTheNextBrief(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, nil)
	res, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
		Title: "Needs a GPU", Goal: "Train it.", Verify: "true", Harness: "scripted", Capabilities: []string{"gpu"},
	}})
	require.NoError(t, err)
	b.waitEvent(t, 10*time.Second, refusalOf(task.ReasonUnplaceable))
	res, err = b.c.Do(context.Background(), Command{Kind: CmdCorrect, TaskID: res.TaskID, Text: "Use the small model."})
	require.NoError(t, err)
	require.False(t, res.Delivered)
	require.Equal(t, "queued for the next brief", res.Message)
	ds, err := b.st.DecisionList(context.Background(), res.TaskID)
	require.NoError(t, err)
	require.Len(t, ds, 1, "stored before anything else")
}

// A correction made just as the session is confirmed, while its brief is
// being rendered, reaches the session once: in the brief or typed after
// it, never both.
func TestCorrectionDuringBriefRenderReachesSessionOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	ctx := context.Background()
	b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionConfirmed))
	const text = "Keep Add's signature."
	res, err := b.c.Do(ctx, Command{Kind: CmdCorrect, TaskID: id, Text: text})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	// A second correction is typed after anything held for the first, so
	// once the agent has logged it, the first has arrived if it ever will.
	_, err = b.c.Do(ctx, Command{Kind: CmdCorrect, TaskID: id, Text: "marker"})
	require.NoError(t, err)
	b.waitRecord(t, 10*time.Second, "the marker", func() bool {
		if strings.Contains(b.recordedBrief(task.PhaseImplement, 1, 1), "marker") {
			return true // both went with the brief
		}
		for _, r := range b.inputsOf(t, agent.InputDecision) {
			if strings.HasSuffix(r.Text, "marker") {
				return true
			}
		}
		return false
	})
	brief := b.recordedBrief(task.PhaseImplement, 1, 1)
	require.NotEmpty(t, brief)
	got := strings.Count(section(t, brief, task.HeadingDecisions, task.HeadingPhasePrefix), text)
	for _, r := range b.inputsOf(t, agent.InputDecision) {
		got += strings.Count(r.Text, text)
	}
	require.Equal(t, 1, got, "the decision reached the session exactly once")
}
