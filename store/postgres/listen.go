package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// channel is the NOTIFY channel every write signals on commit.
const channel = "orchestra_changes"

// listener holds the one connection that LISTENs for the whole Store,
// started by the first Listen call.
type listener struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
	// ready is closed once LISTEN first took, so a write that follows a
	// returned Listen call is always heard.
	ready chan struct{}
}

// Listen signals after every write to the database that commits, from this
// process or any other engine: each write sends NOTIFY inside its
// transaction, which PostgreSQL delivers at commit. If the listening
// connection drops, it reconnects and signals once, since writes may have
// been missed meanwhile. The first call returns once the listening
// connection is up (or ctx ends).
func (s *Store) Listen(ctx context.Context) (<-chan struct{}, error) {
	ch, err := s.changes.Listen(ctx)
	if err != nil {
		return nil, err
	}
	s.listen.once.Do(func() {
		lctx, cancel := context.WithCancel(context.Background())
		s.listen.cancel, s.listen.done, s.listen.ready = cancel, make(chan struct{}), make(chan struct{})
		go s.listenLoop(lctx)
	})
	if s.listen.ready == nil {
		return ch, nil // the store is closing
	}
	// Bounded like every call: a connection whose bytes are dropped never
	// answers LISTEN, and the caller (an engine starting) would wait for
	// good; it gets an error to retry on, and the listener tries again.
	wctx, cancel := store.Bound(ctx, s.pool.timeout)
	defer cancel()
	select {
	case <-s.listen.ready:
		return ch, nil
	case <-wctx.Done():
		return ch, fmt.Errorf("store %s: listen: %w", s.where, wctx.Err())
	}
}

// listenLoop waits for notifications on a connection of its own, and
// reconnects with backoff when it fails, until ctx ends.
func (s *Store) listenLoop(ctx context.Context) {
	defer close(s.listen.done)
	var ready sync.Once
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, func() {
			backoff = 100 * time.Millisecond
			ready.Do(func() { close(s.listen.ready) })
		})
		if ctx.Err() != nil {
			return
		}
		_ = err // the signal below makes every listener reread; the next try reconnects
		s.changes.Notify()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listenOnce LISTENs on one pooled connection and forwards notifications
// until the connection fails or ctx ends. connected runs once LISTEN took.
// Taking the connection and LISTEN are bounded by the call timeout (a
// LISTEN whose bytes are dropped would be waited for by the loop for good);
// the wait for notifications is not, as it may rightly last for hours: a
// dead peer is found by the connection's keepalives (deadline.go).
func (s *Store) listenOnce(ctx context.Context, connected func()) error {
	sctx, cancel := store.Bound(ctx, s.pool.timeout)
	defer cancel()
	conn, err := s.pool.Acquire(sctx)
	if err != nil {
		return err
	}
	// The connection leaves the pool for good: it stays in LISTEN mode.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(sctx, "LISTEN "+channel); err != nil {
		return err
	}
	connected()
	for {
		if _, err := pc.WaitForNotification(ctx); err != nil {
			return err
		}
		s.changes.Notify()
	}
}

// stopListening ends the listening connection, if one was started.
func (s *Store) stopListening() {
	s.listen.once.Do(func() {}) // no listener may start after this
	if s.listen.cancel != nil {
		s.listen.cancel()
		<-s.listen.done
	}
	s.changes.Close()
}
