package ui

import (
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestForwardCoalescesPanesAndKeepsEvents(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := newStubEngine(testNow)
		got := make(chan tea.Msg, 100)
		stop := forward(func(m tea.Msg) { got <- m }, e, FrameInterval)

		// The first pane notice after a quiet frame is drawn at once: a
		// key echoed by an idle pane waits for no timer.
		e.notices <- coord.Notice{Pane: "A"}
		synctest.Wait()
		require.Len(t, got, 1, "the first pane notice is sent at once")
		require.Equal(t, []task.ID{"A"}, (<-got).(panesMsg).ids)

		for range 50 {
			e.notices <- coord.Notice{Pane: "A"}
			e.notices <- coord.Notice{Pane: "B"}
		}
		ev := task.Event{Kind: task.EvLeaseExpired, TaskID: "A"}
		e.notices <- coord.Notice{Event: &ev}
		synctest.Wait()
		require.Len(t, got, 1, "the event is sent at once; the panes that follow wait for the frame")
		require.Equal(t, eventMsg{ev: ev}, <-got)

		time.Sleep(FrameInterval)
		synctest.Wait()
		require.Len(t, got, 1, "a hundred pane notices in one frame make one redraw")
		require.ElementsMatch(t, []task.ID{"A", "B"}, (<-got).(panesMsg).ids)

		time.Sleep(10 * FrameInterval)
		synctest.Wait()
		require.Empty(t, got, "no redraw while no pane changes")

		// After a quiet frame, the next notice is at once again.
		e.notices <- coord.Notice{Pane: "B"}
		synctest.Wait()
		require.Len(t, got, 1, "after a quiet frame the next pane notice is sent at once")
		require.Equal(t, []task.ID{"B"}, (<-got).(panesMsg).ids)

		stop()
		select {
		case <-e.unsubbed:
		default:
			t.Fatal("stop did not end the subscription")
		}
	})
}

// TestForwardRenewsASubscriptionThatFellBehind checks a console that read
// too slowly takes a fresh subscription, tells the model, and goes on
// receiving events instead of falling silent.
func TestForwardRenewsASubscriptionThatFellBehind(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := newStubEngine(testNow)
		got := make(chan tea.Msg, 10)
		stop := forward(func(m tea.Msg) { got <- m }, e, FrameInterval)
		defer stop()

		e.notices <- coord.Notice{Behind: true}
		synctest.Wait()
		require.Equal(t, behindMsg{}, <-got)
		select {
		case <-e.unsubbed:
		default:
			t.Fatal("the stale subscription was not ended")
		}
		ev := task.Event{Kind: task.EvTaskAdded, TaskID: "A"}
		e.notices <- coord.Notice{Event: &ev}
		synctest.Wait()
		require.Equal(t, eventMsg{ev: ev}, <-got, "events still arrive on the new subscription")
	})
}
