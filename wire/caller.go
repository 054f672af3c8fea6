package wire

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Caller makes requests over a Conn and pairs each with its reply: Call
// sends a request under a new id and waits for the reply that carries it;
// the connection's one reader hands every reply to Reply; Fail ends the
// calls waiting, and every later one, when the connection has ended.
type Caller struct {
	c    *Conn
	gone error
	next atomic.Uint64

	mu      sync.Mutex
	waiting map[uint64]chan Frame
	err     error
}

// NewCaller makes requests over c. gone is the error a call that could not
// be sent wraps (the connection is gone).
func NewCaller(c *Conn, gone error) *Caller {
	return &Caller{c: c, gone: gone, waiting: map[uint64]chan Frame{}}
}

// Call sends op with body (none when nil) and returns its reply, OpOK or
// OpError alike; the error is the connection's end (Fail's error), a send
// that failed, or ctx's.
func (cl *Caller) Call(ctx context.Context, op string, body any) (Frame, error) {
	id := cl.next.Add(1)
	ch := make(chan Frame, 1)
	cl.mu.Lock()
	if cl.err != nil {
		cl.mu.Unlock()
		return Frame{}, cl.err
	}
	cl.waiting[id] = ch
	cl.mu.Unlock()
	if err := cl.c.Push(op, id, body); err != nil {
		cl.forget(id)
		return Frame{}, fmt.Errorf("%w: %v", cl.gone, err)
	}
	select {
	case f, ok := <-ch:
		if !ok {
			return Frame{}, cl.Err()
		}
		return f, nil
	case <-ctx.Done():
		cl.forget(id)
		return Frame{}, ctx.Err()
	}
}

func (cl *Caller) forget(id uint64) {
	cl.mu.Lock()
	delete(cl.waiting, id)
	cl.mu.Unlock()
}

// Reply hands a reply to the call waiting for its id; one nobody waits for
// any more (its context ended) is dropped.
func (cl *Caller) Reply(f Frame) {
	cl.mu.Lock()
	ch := cl.waiting[f.ID]
	delete(cl.waiting, f.ID)
	cl.mu.Unlock()
	if ch != nil {
		ch <- f
	}
}

// Fail ends every call waiting, and every later one, with err (nil: the
// gone error given to NewCaller).
func (cl *Caller) Fail(err error) {
	if err == nil {
		err = cl.gone
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.err == nil {
		cl.err = err
	}
	for id, ch := range cl.waiting {
		close(ch)
		delete(cl.waiting, id)
	}
}

// Err is Fail's error; nil while the connection stands.
func (cl *Caller) Err() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.err
}
