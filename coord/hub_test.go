package coord

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A subscriber that stops reading cannot make the coordinator's memory
// grow without bound: past the backlog cap it gets every event up to the
// cap, in order, then one notice saying it fell behind, and its channel
// closes. A subscriber that keeps reading is not affected.
func TestHubEndsASubscriberThatFallsTooFarBehind(t *testing.T) {
	t.Parallel()
	h := &hub{maxBacklog: 5}
	slow, unsubSlow := h.subscribe()
	defer unsubSlow()
	fast, unsubFast := h.subscribe()
	defer unsubFast()

	const total = 12
	deadline := time.After(10 * time.Second)
	for i := range total {
		h.event(task.Event{TaskID: "T", Text: fmt.Sprintf("event %02d", i)})
		h.flush()
		select {
		case n := <-fast:
			require.Equal(t, fmt.Sprintf("event %02d", i), n.Event.Text)
		case <-deadline:
			t.Fatal("the reading subscriber did not get every event")
		}
	}

	var texts []string
	var last Notice
	for n := range slow {
		if n.Event != nil {
			texts = append(texts, n.Event.Text)
			continue
		}
		last = n
	}
	// The cap counts what waits in the queue; the forwarder may hold one
	// more, taken before the reader stopped.
	require.GreaterOrEqual(t, len(texts), 5)
	require.LessOrEqual(t, len(texts), 6)
	for i, text := range texts {
		require.Equal(t, fmt.Sprintf("event %02d", i), text, "a gapless prefix, in order")
	}
	require.True(t, last.Behind, "the last notice says the subscriber fell behind")

	h.mu.Lock()
	defer h.mu.Unlock()
	require.Len(t, h.subs, 1, "the ended subscriber is no longer fed")
}

// Snapshot notices are coalesced like pane notices: however many snapshot
// changes come before the subscriber reads, it is told once (it reads the
// newest snapshot then), and its events are still all delivered, in order.
// Once it read the notice, the next change is a notice of its own.
func TestHubCoalescesSnapshotNotices(t *testing.T) {
	t.Parallel()
	s := &subscriber{dirty: map[task.ID]bool{}, max: MaxBacklog, signal: make(chan struct{}, 1), out: make(chan Notice), done: make(chan struct{})}
	for range 100 {
		require.True(t, s.push(Notice{Snapshot: true}, ""))
	}
	ev := task.Event{TaskID: "T", Text: "an event"}
	s.push(Notice{Event: &ev}, "")
	s.push(Notice{Snapshot: true}, "")
	require.Len(t, s.queue, 2, "a hundred and one changes unread make one notice, before the event")
	require.True(t, s.queue[0].Snapshot)
	require.Equal(t, &ev, s.queue[1].Event)

	go s.forward()
	defer close(s.done)
	require.True(t, (<-s.out).Snapshot)
	s.push(Notice{Snapshot: true}, "")
	require.Equal(t, &ev, (<-s.out).Event)
	require.True(t, (<-s.out).Snapshot, "a change after the notice was read is told again")
}
