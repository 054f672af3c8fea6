package ui

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A task that comes to need a human rings the bell and sends a desktop
// notification naming it; routine events, events from before the console
// opened, and a console with alerts off (--no-anim) stay silent.
func TestAlertRingsWhenATaskNeedsAHuman(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	b.m.opt.Bell, b.m.opt.Desktop = true, true
	tv, _ := b.selectState(task.StateAwaitingReview).m.selected()

	b.send(eventMsg{ev: task.Event{Kind: task.EvLeaseRenewed, TaskID: tv.Task.ID, At: testNow}})
	require.Empty(t, b.raw, "a heartbeat rings nothing")
	b.send(eventMsg{ev: task.Event{Kind: task.EvTaskAwaiting, TaskID: tv.Task.ID, Text: "tests green", At: testNow.Add(-time.Minute)}})
	require.Empty(t, b.raw, "history from before the console opened rings nothing")

	b.send(eventMsg{ev: task.Event{Kind: task.EvTaskAwaiting, TaskID: tv.Task.ID, Text: "tests green", At: testNow}})
	require.Len(t, b.raw, 1)
	require.Equal(t, "\a\x1b]9;task "+tv.Task.ID.Short()+" “"+tv.Task.Title+"” awaits review: tests green\a"+
		"\x1b]777;notify;orchestra-tui;task "+tv.Task.ID.Short()+" “"+tv.Task.Title+"” awaits review: tests green\a", b.raw[0])

	b.m.opt.Desktop = false
	b.send(eventMsg{ev: task.Event{Kind: task.EvRefusal, Reason: task.ReasonStuck, TaskID: tv.Task.ID, At: testNow}})
	require.Equal(t, "\a", b.raw[1], "the bell alone")
	b.m.opt.Bell = false
	b.send(eventMsg{ev: task.Event{Kind: task.EvTaskFailed, TaskID: tv.Task.ID, At: testNow}})
	require.Len(t, b.raw, 2, "alerts off: silent")
}
