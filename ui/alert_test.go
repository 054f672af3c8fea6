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

// A store that failed or does not answer is shown above the status line
// while it lasts, in the engine's words, whole at 80 columns; it goes once
// the store answers again.
func TestStoreFaultIsShownWhileItLasts(t *testing.T) {
	t.Parallel()
	fault := "The store (PostgreSQL) does not answer: connection refused. Placement has paused and resumes by itself once it answers."
	b := setup(t, func(e *stubEngine) { e.snap.StoreFault = fault }).size(80, 24)
	screen := b.view()
	require.Contains(t, screen, "Store: The store (PostgreSQL) does not answer")
	require.Contains(t, screen, "resumes by itself once it answers.", "the advice is wrapped, not cut")

	b.eng.mu.Lock()
	b.eng.snap.StoreFault = ""
	b.eng.mu.Unlock()
	b.send(eventMsg{ev: task.Event{Kind: task.EvStoreRecovered, Text: "The store answers again.", At: testNow}})
	require.NotContains(t, b.view(), "Store: The store")
}
