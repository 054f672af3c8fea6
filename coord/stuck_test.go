package coord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func stuckScript() agent.Script {
	return agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}
}

// An agent that ignores its brief is flagged stuck (an event and a flag the
// UI shows); the operator's resubmit re-pokes it and the task finishes.
func TestStuckPaneIsFlaggedAndResubmitRepokesIt(t *testing.T) {
	t.Parallel()
	b := setup(t, stuckScript(), func(cfg *config.Config) {
		cfg.Stuck.After.Duration = 500 * time.Millisecond
		h := cfg.Harness["scripted"]
		h.Resubmit = "" // a harness of the operator's that names no mode
		cfg.Harness["scripted"] = h
	})
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	brief := b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))
	stuck := b.waitEvent(t, 10*time.Second, refusalOf(task.ReasonStuck))
	require.Equal(t, brief.SessionID, stuck.SessionID)
	require.True(t, strings.HasPrefix(stuck.Text, task.ReasonStuck.Sentence()), stuck.Text)
	b.barrier(t)
	tv := b.taskView(t, id)
	require.True(t, tv.Stuck)
	require.Equal(t, "stuck", tv.Flag)

	res, err := b.c.Do(context.Background(), Command{Kind: CmdResubmit, TaskID: id, Author: "ana"})
	require.NoError(t, err)
	require.Equal(t, brief.SessionID, res.SessionID)
	again := b.waitEvent(t, 10*time.Second, kindIs(task.EvResubmitted))
	require.Contains(t, again.Text, "(submit, by ana)", "the event names the mode the pane got")
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	require.Len(t, b.inputsOf(t, agent.InputOther), 1, "one bare submit re-poked the pane")
	for _, e := range b.events {
		require.False(t, e.Kind == task.EvRefusal && e.Reason == task.ReasonResubmitCap, "no automatic resubmits were asked for")
	}
}

// With automatic resubmit on, a stuck pane recovers on its own.
func TestStuckPaneAutoResubmits(t *testing.T) {
	t.Parallel()
	b := setup(t, stuckScript(), func(cfg *config.Config) {
		cfg.Stuck.After.Duration = 500 * time.Millisecond
		cfg.Stuck.AutoResubmit = 1
	})
	b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, refusalOf(task.ReasonStuck))
	again := b.waitEvent(t, 10*time.Second, kindIs(task.EvResubmitted))
	require.Contains(t, again.Text, "by auto")
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
}
