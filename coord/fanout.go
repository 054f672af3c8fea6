package coord

import "github.com/orchestra-tui/orchestra-tui/task"

// Fanout delivers notices to subscribers with the coordinator's own rules
// (events never dropped for a reader that keeps up, a reader MaxBacklog
// behind ended with a Behind notice, pane notices coalesced per task,
// snapshot notices coalesced). Other implementations of Engine (the engine
// client, which relays a remote engine's notices) use it so every Engine's
// Subscribe behaves the same.
type Fanout struct{ h hub }

// Subscribe adds a subscriber; see Engine.Subscribe.
func (f *Fanout) Subscribe() (<-chan Notice, func()) { return f.h.subscribe() }

// Event delivers a ledger event to every subscriber.
func (f *Fanout) Event(ev task.Event) {
	f.h.event(ev)
	f.h.flush()
}

// Pane marks a pane dirty for every subscriber.
func (f *Fanout) Pane(id task.ID) { f.h.pane(id) }

// Snapshot tells every subscriber that the snapshot changed with no event
// (Notice.Snapshot), coalesced per subscriber like pane notices.
func (f *Fanout) Snapshot() { f.h.snapshot() }

// Behind ends every subscription with a Behind notice: the source of the
// notices fell behind, so every subscriber must reread from the ledger and
// subscribe again.
func (f *Fanout) Behind() {
	f.h.each(func(s *subscriber) bool {
		s.mu.Lock()
		if !s.behind {
			s.behind = true
			s.queue = append(s.queue, Notice{Behind: true})
		}
		s.mu.Unlock()
		select {
		case s.signal <- struct{}{}:
		default:
		}
		return false
	})
}

// Close ends every subscription after its queued notices; later
// subscriptions get a closed channel.
func (f *Fanout) Close() { f.h.close() }
