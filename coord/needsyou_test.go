package coord

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A session stopped at a dialog needs the operator: the task is flagged
// with the dialog's text at once, its lease is held however long the
// dialog waits (an hour here, three leases), no attempt is charged, and
// once it is answered the launch confirms and the task goes on.
func TestFakeDialogNeedsYouHoldsTheLeaseAndChargesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)
		const dialog = "API key: Detected a custom API key in your environment ANTHROPIC_API_KEY: sk-ant-...0000AA Do you want to use this API key? Yes ❯ No (recommended)"
		a.NeedsYou(dialog)
		ev := b.waitEvent(t, kindIs(task.EvSessionNeedsYou))
		require.Contains(t, ev.Text, dialog)
		b.barrier(t)
		require.Equal(t, FlagNeedsYou+dialog, b.taskView(t, id).Flag)

		time.Sleep(time.Hour)
		b.barrier(t)
		tv := b.taskView(t, id)
		require.Equal(t, 1, tv.Task.Attempt)
		require.Equal(t, FlagNeedsYou+dialog, tv.Flag, "still waiting for the operator")
		for _, e := range b.events {
			require.NotEqual(t, task.EvLeaseExpired, e.Kind, b.dump())
			require.NotEqual(t, task.EvTaskRequeued, e.Kind, b.dump())
		}

		a.Answered()
		b.waitEvent(t, kindIs(task.EvSessionAnswered))
		a.Confirm()
		require.Equal(t, "brief", string(a.NextInput().Kind))
		b.waitOnce(t, task.EvBriefDelivered, a.Params().SessionID)
		b.barrier(t)
		require.False(t, strings.HasPrefix(b.taskView(t, id).Flag, FlagNeedsYou))
		a.Work("editing calc.go")
		a.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt, "the dialog cost no attempt")
	})
}
