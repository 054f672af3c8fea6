package coord

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker/workertest"
)

// Everything a console does to a pane reaches the session through its
// handle: a size asked before the launch is the launch size, a later one a
// resize; focus-mode keys are written; the pane shows the handle's screen,
// and a drawn screen becomes a pane notice.
func TestFakePaneGoesThroughTheHandle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		require.NoError(t, b.c.ResizePane(id, 120, 40))
		a, launched := b.launch(t)
		require.Equal(t, 120, a.Params().Cols, "the size asked before the launch is the launch size")
		require.Equal(t, 40, a.Params().Rows)
		require.Contains(t, launched.Text, "pid ", "the launch names the handle's pid")
		require.Equal(t, a.Pid(), launchedPid(t, launched))

		require.NoError(t, b.c.ResizePane(id, 80, 24))
		require.Equal(t, [][2]int{{80, 24}}, a.Resizes())
		require.NoError(t, b.c.Input(id, []byte("j\r")))
		require.Equal(t, "j\r", string(a.Written()))

		a.Work("● Editing calc.go")
		b.waitPaneNotice(t, id)
		v, ok := b.c.Pane(id)
		require.True(t, ok)
		require.True(t, strings.HasPrefix(v.Text(), "● Editing calc.go"), v.Text())
		cols, rows := v.Size()
		require.Equal(t, [2]int{80, 24}, [2]int{cols, rows})
		time.Sleep(90 * time.Second)
		b.barrier(t)
		require.Equal(t, 90*time.Second, b.taskView(t, id).Lease.SinceProgress, "the snapshot's last progress is the handle's")
	})
}

// waitPaneNotice reads notices until one says id's pane changed, with the
// same simulated-day guard as waitEvent.
func (b *fakeBundle) waitPaneNotice(t *testing.T, id task.ID) {
	t.Helper()
	guard := time.NewTimer(24 * time.Hour)
	defer guard.Stop()
	if _, ok := b.next(t, guard.C, func(n Notice) bool { return n.Pane == id }); !ok {
		t.Fatalf("no pane notice for %s within a simulated day; events:\n%s", id, b.dump())
	}
}

// A correction to a briefed session is typed through the handle once,
// after the brief, and its Do returns when it was typed.
func TestFakeCorrectionIsTypedOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		res, err := b.c.Do(context.Background(), Command{Kind: CmdCorrect, TaskID: id, Text: "Use integers only.", Author: "ana"})
		require.NoError(t, err)
		require.True(t, res.Delivered)
		in := a.NextInput()
		require.Equal(t, "decision", string(in.Kind))
		require.Contains(t, in.Text, "Use integers only.")
		b.barrier(t)
		require.Len(t, a.Typed(), 2, "the brief and the correction, nothing twice")
	})
}

// An agent that ignores SIGTERM is killed after exactly the stop grace,
// and the session's exit says so.
func TestFakeStubbornAgentIsKilledAfterGrace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		a.IgnoreTerm()
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		exited := b.waitEvent(t, kindIs(task.EvSessionExited))
		require.Equal(t, 10*time.Second, exited.At.Sub(expired.At), b.dump())
		require.Contains(t, exited.Text, " was stopped by the engine (SIGKILL, exit 137): ", "the kill is the engine's, said so")
	})
}

// Stopping the coordinator stops every session through its handle, and
// gives the attempts back: the machine stopped, not the agents.
func TestFakeShutdownStopsEverySession(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			h := cfg.Harness[fakeHarness]
			h.Capacity = 2
			cfg.Harness[fakeHarness] = h
		})
		ids := []task.ID{b.add(t, task.Pipeline{task.PhaseImplement}), b.add(t, task.Pipeline{task.PhaseImplement})}
		a1, _ := b.launch(t)
		a2, _ := b.launch(t)
		time.Sleep(5 * time.Minute)
		b.stop()
		for _, a := range []*workertest.Fake{a1, a2} {
			<-a.Done()
			require.Len(t, a.Stops(), 1)
			require.Equal(t, workertest.ExitTerm, a.ExitCode())
		}
		for _, id := range ids {
			tk, err := b.st.TaskGet(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, task.StateQueued, tk.State)
			require.Zero(t, tk.Attempt, "a stopped console charges no attempt")
			ss, err := b.st.SessionList(context.Background(), id)
			require.NoError(t, err)
			require.Len(t, ss, 1)
			require.Equal(t, store.SessionKilled, ss[0].Status)
		}
	})
}

// A one-shot agent finishes its phase and exits the moment it starts,
// before its launch is applied or confirmed: the coordinator takes the
// finish first (it confirms the launch) and the exit after, whichever
// order the launch and the reports reach the loop in.
func TestFakeOneShotFinishBeforeLaunchIsApplied(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		a.Finish(nil)
		a.Exit(0, nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		var kinds []task.Kind
		for _, e := range b.events {
			if e.SessionID == a.Params().SessionID {
				kinds = append(kinds, e.Kind)
			}
		}
		require.Subset(t, kinds, []task.Kind{task.EvSessionLaunched, task.EvSessionConfirmed, task.EvArtifactSealed})
		for _, e := range b.events {
			require.NotEqual(t, task.EvDeadEnd, e.Kind, "a finished one-shot agent's exit is no crash:\n%s", b.dump())
		}
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt)
	})
}
