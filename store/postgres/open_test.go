package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	ctx := context.Background()
	exec := func(t *testing.T, url, sql string) {
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		require.NoError(t, err)
	}

	t.Run("ForeignDatabaseRefusedUntouched", func(t *testing.T) {
		t.Parallel()
		url := c.NewDatabase(t)
		exec(t, url, `CREATE TABLE invoices (id int)`)
		_, err := Open(ctx, url)
		require.ErrorIs(t, err, store.ErrForeign)
		require.Contains(t, err.Error(), "not an orchestra store")
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		var n int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n))
		require.Equal(t, 1, n, "Open must not add tables to a foreign database")
	})

	t.Run("NewerSchemaRefused", func(t *testing.T) {
		t.Parallel()
		url := c.NewDatabase(t)
		st, err := Open(ctx, url)
		require.NoError(t, err)
		require.NoError(t, st.Close())
		exec(t, url, `UPDATE orchestra_schema SET version = 999`)
		_, err = Open(ctx, url)
		require.ErrorIs(t, err, store.ErrTooNew)
		require.Contains(t, err.Error(), "999")
	})

	t.Run("ConcurrentOpensMigrateOnce", func(t *testing.T) {
		t.Parallel()
		url := c.NewDatabase(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				st, err := Open(ctx, url)
				if err == nil {
					err = st.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		var rows, version int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), max(version) FROM orchestra_schema`).Scan(&rows, &version))
		require.Equal(t, 1, rows)
		require.Equal(t, len(migrations), version)
	})

	t.Run("PasswordNeverInErrors", func(t *testing.T) {
		t.Parallel()
		// Nothing listens on this socket directory: the open fails, and its
		// message must name the database without the password.
		url := "postgres://alice:s3cret-pw@/orchestra?host=/nonexistent-orchestra-dir&connect_timeout=2"
		_, err := Open(ctx, url)
		require.Error(t, err)
		require.NotContains(t, err.Error(), "s3cret-pw")
		require.Contains(t, err.Error(), "alice")
	})
}

func TestRedact(t *testing.T) {
	t.Parallel()
	require.Equal(t, "postgres://bob:xxxxx@db.example:5432/orch", Redact("postgres://bob:hunter2@db.example:5432/orch"))
	require.Equal(t, "postgres://db/orch?password=xxxxx&sslmode=require", Redact("postgres://db/orch?password=hunter2&sslmode=require"))
	require.NotContains(t, Redact("postgres://bob:hunter2@[::1"), "hunter2")
	require.True(t, IsURL("postgresql://x/y"))
	require.False(t, IsURL("/repo/.orchestra/orchestra.db"))
}

// A write through one Store wakes the listeners of another Store on the same
// database, as it would an engine on another machine.
func TestListenAcrossStores(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	ctx := context.Background()
	a, err := Open(ctx, url)
	require.NoError(t, err)
	defer a.Close()
	b, err := Open(ctx, url)
	require.NoError(t, err)
	defer b.Close()
	ch, err := b.Listen(ctx)
	require.NoError(t, err)
	// Listen returned with LISTEN in place: the first write is heard.
	require.NoError(t, a.EventAppend(ctx, task.Event{TaskID: "t1", Kind: task.EvUsage, Text: "x", At: time.Now()}))
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("no signal from another store's write")
	}
}
