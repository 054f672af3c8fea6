package coord

import (
	"sync"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// hub fans notices out to subscribers. Event notices are queued without
// bound and never dropped; pane notices are coalesced per task, so a
// subscriber that reads slowly sees each dirty pane once and pulls the
// newest screen anyway.
type hub struct {
	mu     sync.Mutex
	subs   map[int]*subscriber
	next   int
	closed bool
	// outbox holds the events of the loop iteration in progress. They go
	// out in flush, after the loop has published the snapshot they led to,
	// so a subscriber that reads the snapshot on an event sees its effect.
	outbox []task.Event
}

type subscriber struct {
	mu     sync.Mutex
	queue  []Notice
	dirty  map[task.ID]bool
	signal chan struct{}
	out    chan Notice
	done   chan struct{}
}

// subscribe adds a subscriber and starts its forwarding goroutine.
func (h *hub) subscribe() (<-chan Notice, func()) {
	s := &subscriber{dirty: map[task.ID]bool{}, signal: make(chan struct{}, 1), out: make(chan Notice), done: make(chan struct{})}
	h.mu.Lock()
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

func (h *hub) each(f func(*subscriber)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		f(s)
	}
}

func (h *hub) event(ev task.Event) {
	h.mu.Lock()
	h.outbox = append(h.outbox, ev)
	h.mu.Unlock()
}

// flush sends the held events to every subscriber, in order.
func (h *hub) flush() {
	h.mu.Lock()
	out := h.outbox
	h.outbox = nil
	h.mu.Unlock()
	for i := range out {
		e := out[i]
		h.each(func(s *subscriber) { s.push(Notice{Event: &e}, "") })
	}
}

func (h *hub) pane(id task.ID) {
	h.each(func(s *subscriber) { s.push(Notice{Pane: id}, id) })
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

func (s *subscriber) push(n Notice, pane task.ID) {
	s.mu.Lock()
	if pane != "" {
		if s.dirty[pane] {
			s.mu.Unlock()
			return
		}
		s.dirty[pane] = true
	}
	s.queue = append(s.queue, n)
	s.mu.Unlock()
	select {
	case s.signal <- struct{}{}:
	default:
	}
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
		s.queue = s.queue[1:]
		if n.Pane != "" {
			delete(s.dirty, n.Pane)
		}
		s.mu.Unlock()
		if n.Event == nil && n.Pane == "" {
			return
		}
		select {
		case s.out <- n:
		case <-s.done:
			return
		}
	}
}
