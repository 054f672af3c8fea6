package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// timeout is the call timeout of the stores these tests open.
const timeout = time.Second

// openProxied opens a store with the call timeout on a database behind an
// in-process Toxiproxy (pgtest.Proxied), closed when the test ends.
func openProxied(t *testing.T) (*toxiproxy.Proxy, *Store) {
	t.Helper()
	p, u := pgtest.Proxied(t)
	st, err := Open(context.Background(), u, CallTimeout(timeout))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return p, st
}

// dropAll adds a Toxiproxy timeout toxic of timeout 0: nothing the client
// sends reaches the server, and no connection is closed, so a call waits
// for an answer that never comes.
func dropAll(t *testing.T, p *toxiproxy.Proxy) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"name": "drop", "type": "timeout", "stream": "upstream",
		"toxicity": 1.0, "attributes": map[string]any{"timeout": 0}})
	require.NoError(t, err)
	_, err = p.Toxics.AddToxicJson(strings.NewReader(string(body)))
	require.NoError(t, err)
}

// A call with no deadline of its own (context.Background(), as the
// coordinator's loop and the CLI make them) on a connection whose bytes
// are dropped fails once the store's call timeout has passed, reads and
// writes alike, on a pooled connection or a new one; once the bytes pass
// again, the next call succeeds. Without the bound each call hung for good.
func TestACallWhoseBytesAreDroppedFailsAtTheCallTimeout(t *testing.T) {
	t.Parallel()
	p, st := openProxied(t)
	ev := func() task.Event {
		return task.Event{TaskID: "T1", Kind: task.EvTaskAdded, Text: "added", At: time.Now().UTC()}
	}
	require.NoError(t, st.EventAppend(context.Background(), ev()))

	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"a write", func(ctx context.Context) error { return st.EventAppend(ctx, ev()) }},
		{"a row read", func(ctx context.Context) error { _, err := st.EventLastSeq(ctx); return err }},
		{"a rows read", func(ctx context.Context) error {
			_, err := st.EventList(ctx, store.EventListParams{})
			return err
		}},
		{"a shared query", func(ctx context.Context) error { _, err := st.UsageList(ctx); return err }},
	}
	dropAll(t, p)
	for _, c := range calls {
		began := time.Now()
		done := make(chan error, 1)
		go func() { done <- c.call(context.Background()) }()
		select {
		case err := <-done:
			took := time.Since(began)
			require.Error(t, err, "%s while nothing passes", c.name)
			require.True(t, errors.Is(err, context.DeadlineExceeded), "%s: %v", c.name, err)
			require.GreaterOrEqual(t, took, timeout, "%s failed before its deadline: %v", c.name, err)
			t.Logf("%s failed after %s: %v", c.name, took.Round(time.Millisecond), err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s still waits 30 s after the bytes stopped (call timeout %s)", c.name, timeout)
		}
	}
	require.NoError(t, p.Toxics.RemoveToxic(context.Background(), "drop"))
	for _, c := range calls {
		require.NoError(t, c.call(context.Background()), "%s once the bytes pass again", c.name)
	}
	// A deadline of the caller's own is the caller's: a longer one is kept.
	dropAll(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	began := time.Now()
	_, err := st.EventLastSeq(ctx)
	require.Error(t, err)
	require.GreaterOrEqual(t, time.Since(began), 2*timeout, "the caller's deadline, not the store's")
	require.NoError(t, p.Toxics.RemoveToxic(context.Background(), "drop"))
}

// Open itself is bounded: a database whose bytes are dropped before the
// store is opened makes Open fail at the call timeout (connect_timeout set
// from it), not hang: what `orchestra-tui add` does during a partition.
func TestOpenOnADatabaseThatDropsEverythingFailsAtTheCallTimeout(t *testing.T) {
	t.Parallel()
	p, u := pgtest.Proxied(t)
	dropAll(t, p)
	done := make(chan error, 1)
	go func() {
		st, err := Open(context.Background(), u, CallTimeout(timeout))
		if err == nil {
			st.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		require.NotContains(t, err.Error(), "password")
	case <-time.After(30 * time.Second):
		t.Fatal("Open still waits 30 s after the bytes stopped")
	}
	require.NoError(t, p.Toxics.RemoveToxic(context.Background(), "drop"))
	st, err := Open(context.Background(), u, CallTimeout(timeout))
	require.NoError(t, err, "once the bytes pass again")
	require.NoError(t, st.Close())
}

// A connection the pool dials while the bytes are dropped gives its slot
// back at the call timeout (connect_timeout, set from it): pgxpool dials
// out of the caller's context, so without it every slot of the pool was
// held by a startup waiting for an answer, and the calls after the
// network came back still failed.
func TestConnectionsDialledWhileBytesAreDroppedFreeTheirSlots(t *testing.T) {
	t.Parallel()
	p, st := openProxied(t)
	dropAll(t, p)
	n := int(st.pool.Config().MaxConns) + 2
	errs := make(chan error, n)
	for range n {
		go func() { _, err := st.EventLastSeq(context.Background()); errs <- err }()
	}
	for range n {
		require.Error(t, <-errs)
	}
	require.NoError(t, p.Toxics.RemoveToxic(context.Background(), "drop"))
	_, err := st.EventLastSeq(context.Background())
	require.NoError(t, err, "the first call once the bytes pass again")
}

// The first Listen, whose LISTEN is dropped, fails at the call timeout
// instead of holding its caller (an engine starting up) for good; once the
// bytes pass again, a Listen returns and hears a write.
func TestAListenWhoseBytesAreDroppedFailsAtTheCallTimeout(t *testing.T) {
	t.Parallel()
	p, st := openProxied(t)
	dropAll(t, p)
	done := make(chan error, 1)
	go func() { _, err := st.Listen(t.Context()); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(30 * time.Second):
		t.Fatalf("Listen still waits 30 s after the bytes stopped (call timeout %s)", timeout)
	}
	require.NoError(t, p.Toxics.RemoveToxic(context.Background(), "drop"))
	var ch <-chan struct{}
	for ch == nil { // the listener retries with its backoff; each try is bounded
		if c, err := st.Listen(t.Context()); err == nil {
			ch = c
		}
	}
	for len(ch) > 0 {
		<-ch // the signal of the reconnection
	}
	require.NoError(t, st.EventAppend(context.Background(), task.Event{TaskID: "T1", Kind: task.EvTaskAdded, Text: "added", At: time.Now().UTC()}))
	<-ch
}

// A write transaction left idle while it holds the write lock (its engine
// frozen, SIGSTOP, between two statements) is ended by the server after
// the call timeout (idle_in_transaction_session_timeout), so another
// engine's write goes through instead of waiting for the frozen one.
func TestAFrozenWriterReleasesTheWriteLockAtTheCallTimeout(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	db := c.NewDatabase(t)
	ctx := context.Background()
	frozen, err := Open(ctx, db, CallTimeout(time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { frozen.Close() })
	other, err := Open(ctx, db, CallTimeout(20*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })

	tx, err := frozen.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(writeLock))
	require.NoError(t, err)
	var free bool
	require.NoError(t, other.pool.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(writeLock)).Scan(&free))
	require.False(t, free, "the frozen writer does not hold the write lock")
	// The frozen writer sends nothing more; the other's write waits for
	// the lock until the server ends the idle transaction.
	require.NoError(t, other.EventAppend(ctx, task.Event{TaskID: "T1", Kind: task.EvTaskAdded, Text: "added", At: time.Now().UTC()}),
		"a write behind a frozen writer's lock")
	// The server ended the frozen writer's session; it did not let go by
	// itself. (No stopwatch: the server's idle timer starts before the
	// test's would, so a measured second may read 999 ms.)
	_, err = tx.Exec(ctx, `SELECT 1`)
	require.Error(t, err, "the frozen writer's transaction is still open")
}
