package store

import (
	"context"
	"sync"
)

// Changes fans a "the store changed" signal out to listeners. A signal is
// a wake-up, not a message: each listener's channel holds at most one
// pending signal, so a slow listener never blocks a writer or grows memory,
// and on waking it rereads what it needs (EventList after the last Seq it
// saw). Drivers embed one and call Notify after every committed write.
// The zero value is ready to use.
type Changes struct {
	mu        sync.Mutex
	listeners map[chan struct{}]struct{}
	closed    bool
}

// Notify wakes every listener that has no signal pending already.
func (c *Changes) Notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.listeners {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Listen returns a channel that receives a signal after changes, and is
// closed when ctx ends or Close is called.
func (c *Changes) Listen(ctx context.Context) (<-chan struct{}, error) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		close(ch)
		return ch, nil
	}
	if c.listeners == nil {
		c.listeners = make(map[chan struct{}]struct{})
	}
	c.listeners[ch] = struct{}{}
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.listeners[ch]; ok {
			delete(c.listeners, ch)
			close(ch)
		}
	})
	return ch, nil
}

// Close closes every listener's channel; later Listen calls get a closed
// channel.
func (c *Changes) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for ch := range c.listeners {
		close(ch)
	}
	c.listeners = nil
}
