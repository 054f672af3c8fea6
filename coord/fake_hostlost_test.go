package coord

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A session host that dies under its agent is the machine's failure: each
// loss is a refusal naming the host, the phase is relaunched with its
// continuity, and the attempt is given back, so three losses (more than
// max_attempts) leave the task on attempt 1, and it finishes green. Past
// hostLossesFree the losses are charged, so a host that always dies fails
// the task instead of relaunching it for ever.
func TestFakeALostSessionHostIsNotChargedToTheTask(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		lost := func(pid int) *task.Refusal {
			return task.Refuse(task.ReasonHostLost, "Its session host (pid %d) died, taking the agent with it.", pid)
		}
		for i := range 3 {
			a, _ := b.launch(t)
			a.Work("● Update(calc.go)")
			a.Exit(-1, lost(4100+i))
			b.waitEvent(t, func(e task.Event) bool { return e.Kind == task.EvTaskRequeued && e.Reason == task.ReasonHostLost })
		}
		a, _ := b.launch(t)
		require.Contains(t, b.lastSession(t, id).Brief, task.HeadingContinuity, "the relaunch got the lost session's continuity")
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())

		tk := b.taskView(t, id).Task
		require.Equal(t, 1, tk.Attempt, "no host loss was charged:\n%s", b.dump())
		refusals := b.ledger(t, id, func(e task.Event) bool { return e.Kind == task.EvRefusal && e.Reason == task.ReasonHostLost })
		require.Len(t, refusals, 3)
		for i, e := range refusals {
			require.Contains(t, e.Text, fmt.Sprintf("session host (pid %d)", 4100+i))
			require.Contains(t, e.Text, "no attempt counted")
		}
		require.Empty(t, b.ledger(t, id, kindIs(task.EvDeadEnd)), "a host's death is no dead end of the approach")

		// A host that always dies: the free losses run out and the task
		// fails on its attempts rather than relaunching for ever.
		id2 := b.add(t, task.Pipeline{task.PhaseImplement})
		for {
			a, _ := b.launch(t)
			a.Exit(-1, lost(1))
			ev := b.waitEvent(t, func(e task.Event) bool {
				return e.TaskID == id2 && (e.Kind == task.EvTaskRequeued || e.Kind == task.EvTaskFailed)
			})
			if ev.Kind == task.EvTaskFailed {
				break
			}
		}
		n := len(b.ledger(t, id2, kindIs(task.EvSessionLaunched)))
		require.Equal(t, hostLossesFree+b.cfg.Lease.MaxAttempts, n, "free losses, then max_attempts charged ones:\n%s", b.dump())
		require.True(t, strings.Contains(b.taskView(t, id2).Task.Reason, string(task.ReasonAttemptsExhausted)), b.dump())
	})
}
