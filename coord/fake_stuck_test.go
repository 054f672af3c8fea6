package coord

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// An agent that ignores its brief is flagged stuck (an event and a flag the
// UI shows); the operator's resubmit re-pokes it, with a bare submit when
// the harness names no mode, and the task finishes.
func TestFakeStuckPaneIsFlaggedAndResubmitRepokesIt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Stuck.After.Duration = 3 * time.Minute
			h := cfg.Harness[fakeHarness]
			h.Resubmit = "" // a harness of the operator's that names no mode
			cfg.Harness[fakeHarness] = h
		})
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		stuck := b.waitEvent(t, refusalOf(task.ReasonStuck))
		require.Equal(t, a.Params().SessionID, stuck.SessionID)
		require.True(t, strings.HasPrefix(stuck.Text, task.ReasonStuck.Sentence()), stuck.Text)
		b.barrier(t)
		tv := b.taskView(t, id)
		require.True(t, tv.Stuck)
		require.Equal(t, "stuck", tv.Flag)

		res, err := b.c.Do(context.Background(), Command{Kind: CmdResubmit, TaskID: id, Author: "ana"})
		require.NoError(t, err)
		require.Equal(t, a.Params().SessionID, res.SessionID)
		again := b.waitEvent(t, kindIs(task.EvResubmitted))
		require.Contains(t, again.Text, "(submit, by ana)", "the event names the mode the pane got")
		in := a.NextInput()
		require.Equal(t, worker.InputResubmit, in.Kind)
		require.Equal(t, session.ResubmitSubmit, in.Mode, "one bare submit re-poked the pane")

		a.Work("● Update(calc.go)")
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		var resubmits int
		for _, in := range a.Typed() {
			if in.Kind == worker.InputResubmit {
				resubmits++
			}
		}
		require.Equal(t, 1, resubmits, "no automatic resubmits were asked for")
		for _, e := range b.events {
			require.False(t, e.Kind == task.EvRefusal && e.Reason == task.ReasonResubmitCap, "no automatic resubmits were asked for")
		}
	})
}

// With automatic resubmit on, a stuck pane recovers on its own: the
// resubmit comes as soon as the pane is flagged.
func TestFakeStuckPaneAutoResubmits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Stuck.After.Duration = 3 * time.Minute
			cfg.Stuck.AutoResubmit = 1
		})
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		stuck := b.waitEvent(t, refusalOf(task.ReasonStuck))
		again := b.waitEvent(t, kindIs(task.EvResubmitted))
		require.Contains(t, again.Text, "by auto")
		require.Equal(t, stuck.At, again.At, "resubmitted as soon as it was flagged")
		require.Equal(t, worker.InputResubmit, a.NextInput().Kind)
		a.Work("● Update(calc.go)")
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	})
}
