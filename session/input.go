package session

import (
	"io"
	"sync"
)

// inputQueue carries every byte bound for the program (operator typing,
// pastes, submits and the emulator's replies to queries) to one writer
// goroutine, in order.
//
// Enqueueing never blocks. That matters: the emulator hands its replies
// over while holding its write lock, and the output reader holds that lock
// while parsing. If a reply had to wait for the pty (whose input buffer is
// full because the program is itself blocked writing output we are not
// reading), the session would deadlock.
type inputQueue struct {
	mu      sync.Mutex
	pending [][]byte
	closed  bool
	wake    chan struct{}
}

func newInputQueue() *inputQueue { return &inputQueue{wake: make(chan struct{}, 1)} }

// push queues b as one write; it reports false once the queue is closed.
func (q *inputQueue) push(b []byte) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.pending = append(q.pending, b)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// close makes later pushes fail and ends run.
func (q *inputQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run writes queued chunks to w, calling record with each chunk first,
// until the queue is closed. A failed write drops the chunk: the program is
// gone or going, and the exit is reported elsewhere.
func (q *inputQueue) run(w io.Writer, record func([]byte)) {
	for range q.wake {
		q.mu.Lock()
		batch, closed := q.pending, q.closed
		q.pending = nil
		q.mu.Unlock()
		if closed {
			return
		}
		for _, b := range batch {
			record(b)
			_, _ = w.Write(b)
		}
	}
}
