package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A write with no deadline of its own that waits for the writer connection
// (another write holds it, here one that never ends by itself) fails at the
// store's call timeout, as a PostgreSQL store's call does, instead of
// waiting for good; once the writer is free the next write succeeds.
func TestAWriteWaitingForTheWriterFailsAtTheCallTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	st, err := Open(filepath.Join(t.TempDir(), "orchestra.db"), CallTimeout(timeout))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	ev := func() task.Event {
		return task.Event{TaskID: "T1", Kind: task.EvTaskAdded, Text: "added", At: time.Now().UTC()}
	}
	// The holder's own deadline is kept (a minute), not the store's.
	hold, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held, release, holderDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		holderDone <- st.write(hold, func(*sql.Tx) error { close(held); <-release; return nil })
	}()
	<-held
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- st.EventAppend(context.Background(), ev()) }()
	select {
	case err := <-done:
		require.Error(t, err)
		require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
		require.GreaterOrEqual(t, time.Since(began), timeout)
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatalf("a write still waits for the writer 30 s on (call timeout %s)", timeout)
	}
	close(release)
	require.NoError(t, <-holderDone, "the holder's write, within its own deadline")
	require.NoError(t, st.EventAppend(context.Background(), ev()), "once the writer is free")
}
