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

// A snapshot notice (a snapshot that came with no event) is a redraw that
// reads the snapshot again: at once after a quiet frame, then coalesced
// with the frame's pane notices; an event in between, which reads the
// snapshot anyway, makes the frame's snapshot read unneeded.
func TestForwardCoalescesSnapshotNotices(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := newStubEngine(testNow)
		got := make(chan tea.Msg, 100)
		stop := forward(func(m tea.Msg) { got <- m }, e, FrameInterval)
		defer stop()

		e.notices <- coord.Notice{Snapshot: true}
		synctest.Wait()
		require.Len(t, got, 1, "a snapshot after a quiet frame is read at once")
		require.Equal(t, panesMsg{ids: []task.ID{}, snap: true}, <-got)

		for range 20 {
			e.notices <- coord.Notice{Snapshot: true}
			e.notices <- coord.Notice{Pane: "A"}
		}
		synctest.Wait()
		require.Empty(t, got, "the rest of the frame waits for its end")
		time.Sleep(FrameInterval)
		synctest.Wait()
		require.Len(t, got, 1, "twenty snapshots and panes in one frame make one redraw")
		require.Equal(t, panesMsg{ids: []task.ID{"A"}, snap: true}, <-got)

		e.notices <- coord.Notice{Snapshot: true}
		ev := task.Event{Kind: task.EvLeaseRenewed, TaskID: "A"}
		e.notices <- coord.Notice{Event: &ev}
		synctest.Wait()
		require.Equal(t, eventMsg{ev: ev}, <-got)
		time.Sleep(FrameInterval)
		synctest.Wait()
		require.Empty(t, got, "the event read the snapshot the notice announced")

		time.Sleep(10 * FrameInterval)
		e.notices <- coord.Notice{Snapshot: true}
		synctest.Wait()
		require.Equal(t, panesMsg{ids: []task.ID{}, snap: true}, <-got, "after a quiet frame, at once again")
	})
}

// A snapshot that arrives with no event (a session another engine runs,
// relayed, with its lease) is on the console's screen once the snapshot
// notice is drawn, with no key pressed; a pane notice alone does not read
// the snapshot.
func TestSnapshotNoticeRereadsTheSnapshot(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(140, 40)
	leased := fixtureID(1)
	for b.m.selID != leased {
		b.press("j")
	}
	b.eng.mu.Lock()
	for i := range b.eng.snap.Tasks {
		if b.eng.snap.Tasks[i].Task.ID == leased {
			l := *b.eng.snap.Tasks[i].Lease
			l.Holder, l.Renewals = "machine-b", 4
			b.eng.snap.Tasks[i].Lease = &l
		}
	}
	b.eng.mu.Unlock()
	b.send(panesMsg{ids: []task.ID{leased}})
	require.NotContains(t, b.view(), "renewals 4/6", "a pane notice draws the panes, not the snapshot")
	b.send(panesMsg{snap: true})
	require.Contains(t, b.view(), "renewals 4/6", "the snapshot notice read the new snapshot")
}
