package coord

import (
	"sync"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// MaxBacklog is how many event notices may wait for one subscriber. A
// subscriber that stops reading (a UI stuck in Update, a script that
// forgot its channel) would otherwise make the coordinator's memory grow
// for as long as agents run. Past it the subscription ends with a Behind
// notice: the reader knows exactly where its view stops, and the ledger
// in the store still has every event.
const MaxBacklog = 50_000

// hub fans notices out to subscribers. Event notices are queued and never
// dropped for a subscriber that keeps up; one that falls more than the
// backlog cap behind is ended with a Behind notice instead of growing
// without bound. Pane notices are coalesced per task, so a subscriber that
// reads slowly sees each dirty pane once and pulls the newest screen anyway.
type hub struct {
	mu     sync.Mutex
	subs   map[int]*subscriber
	next   int
	closed bool
	// maxBacklog overrides MaxBacklog when positive (tests).
	maxBacklog int
	// outbox holds the events of the loop iteration in progress. They go
	// out in flush, after the loop has published the snapshot they led to,
	// so a subscriber that reads the snapshot on an event sees its effect.
	outbox []task.Event
	// tap, if set, sees every event as the loop publishes it (the notify
	// command); it runs on the loop and must not block.
	tap func(task.Event)
	// seqs, if set, gives the ledger positions of events by id. flush
	// stamps each event that has none with it, so a subscriber (events
	// --follow, a console) sees the seq a later read of the ledger gives
	// and can resume from it. An event not in the ledger (a store failure
	// reported, one held through an outage) goes out with Seq 0.
	seqs func(ids []string) map[string]int64
}

type subscriber struct {
	mu     sync.Mutex
	queue  []Notice
	events int // event notices in queue
	max    int
	behind bool // the backlog overflowed; the queue ends with a Behind notice
	dirty  map[task.ID]bool
	snap   bool // a Snapshot notice is queued
	signal chan struct{}
	out    chan Notice
	done   chan struct{}
}

// subscribe adds a subscriber and starts its forwarding goroutine.
func (h *hub) subscribe() (<-chan Notice, func()) {
	s := &subscriber{dirty: map[task.ID]bool{}, signal: make(chan struct{}, 1), out: make(chan Notice), done: make(chan struct{})}
	h.mu.Lock()
	s.max = h.maxBacklog
	if s.max <= 0 {
		s.max = MaxBacklog
	}
	if h.subs == nil {
		h.subs = map[int]*subscriber{}
	}
	id := h.next
	h.next++
	if h.closed {
		h.mu.Unlock()
		close(s.out)
		return s.out, func() {}
	}
	h.subs[id] = s
	h.mu.Unlock()
	go s.forward()
	var once sync.Once
	return s.out, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, id)
			h.mu.Unlock()
			close(s.done)
		})
	}
}

// each calls f for every subscriber; one that f reports as ended (it fell
// too far behind) is no longer fed.
func (h *hub) each(f func(*subscriber) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range h.subs {
		if !f(s) {
			delete(h.subs, id)
		}
	}
}

func (h *hub) event(ev task.Event) {
	h.mu.Lock()
	h.outbox = append(h.outbox, ev)
	h.mu.Unlock()
	if h.tap != nil {
		h.tap(ev)
	}
}

// pending reports whether events wait for the next flush.
func (h *hub) pending() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.outbox) > 0
}

// stampSeqs sets the Seq of every event of evs that has none, from one
// lookup of all their ids.
func stampSeqs(evs []task.Event, seqs func([]string) map[string]int64) {
	if seqs == nil {
		return
	}
	var ids []string
	for _, e := range evs {
		if e.Seq == 0 && e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	got := seqs(ids)
	for i := range evs {
		if evs[i].Seq == 0 {
			evs[i].Seq = got[evs[i].ID]
		}
	}
}

// flush sends the held events to every subscriber, in order.
func (h *hub) flush() {
	h.mu.Lock()
	out := h.outbox
	h.outbox = nil
	seqs := h.seqs
	h.mu.Unlock()
	stampSeqs(out, seqs)
	for i := range out {
		e := out[i]
		h.each(func(s *subscriber) bool { return s.push(Notice{Event: &e}, "") })
	}
}

func (h *hub) pane(id task.ID) {
	h.each(func(s *subscriber) bool { return s.push(Notice{Pane: id}, id) })
}

// snapshot tells every subscriber the snapshot changed, once per
// subscriber until it reads the notice.
func (h *hub) snapshot() {
	h.each(func(s *subscriber) bool { return s.push(Notice{Snapshot: true}, "") })
}

// close ends every subscription after its queued notices are delivered.
func (h *hub) close() {
	h.flush()
	h.mu.Lock()
	h.closed = true
	subs := h.subs
	h.subs = nil
	h.mu.Unlock()
	for _, s := range subs {
		s.push(Notice{}, "") // a zero notice marks the end
	}
}

// push queues n and reports whether the subscription goes on: false once
// its event backlog overflowed and it was ended with a Behind notice.
func (s *subscriber) push(n Notice, pane task.ID) bool {
	s.mu.Lock()
	if s.behind {
		s.mu.Unlock()
		return false
	}
	if pane != "" {
		if s.dirty[pane] {
			s.mu.Unlock()
			return true
		}
		s.dirty[pane] = true
	}
	if n.Snapshot {
		if s.snap {
			s.mu.Unlock()
			return true
		}
		s.snap = true
	}
	if n.Event != nil {
		if s.events >= s.max {
			n = Notice{Behind: true}
			s.behind = true
		} else {
			s.events++
		}
	}
	s.queue = append(s.queue, n)
	s.mu.Unlock()
	select {
	case s.signal <- struct{}{}:
	default:
	}
	return !s.behind
}

func (s *subscriber) forward() {
	defer close(s.out)
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			select {
			case <-s.signal:
				continue
			case <-s.done:
				return
			}
		}
		n := s.queue[0]
		s.queue[0] = Notice{} // let the delivered event be collected
		s.queue = s.queue[1:]
		if n.Pane != "" {
			delete(s.dirty, n.Pane)
		}
		if n.Snapshot {
			s.snap = false
		}
		if n.Event != nil {
			s.events--
		}
		s.mu.Unlock()
		if n.Event == nil && n.Pane == "" && !n.Behind && !n.Snapshot {
			return
		}
		select {
		case s.out <- n:
		case <-s.done:
			return
		}
		if n.Behind {
			return
		}
	}
}
