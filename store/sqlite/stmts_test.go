package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func (c *stmts) has(q string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[q]
	return ok
}

const insertDecisionSQL = `INSERT INTO decisions (id, task_id, text, author, at, anchor, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?)`

// A statement met in a write is prepared before the next write begins
// and reused from then on; one met in a read is prepared at once. The
// decisions written both ways read back the same.
func TestStatementsArePreparedOnceAndReused(t *testing.T) {
	t.Parallel()
	st, err := Open(filepath.Join(t.TempDir(), "orchestra.db"))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	tk := sampleTask("stmts")
	require.NoError(t, st.TaskInsert(ctx, tk))
	decide := func(text string) store.Decision {
		d := store.Decision{ID: task.NewULID(tk.CreatedAt), TaskID: tk.ID, Text: text, Author: "ops", At: tk.CreatedAt.UTC()}
		require.NoError(t, st.DecisionInsert(ctx, d))
		return d
	}
	d1 := decide("first, as text")
	require.False(t, st.wstmts.has(insertDecisionSQL), "prepared inside the transaction that met it")
	d2 := decide("second, prepared before its transaction")
	require.True(t, st.wstmts.has(insertDecisionSQL), "not prepared before the next write")
	d3 := decide("third, reused")
	got, err := st.DecisionList(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Decision{d1, d2, d3}, got)
	st.rstmts.mu.Lock()
	reads := len(st.rstmts.m)
	st.rstmts.mu.Unlock()
	require.Positive(t, reads, "the read was not prepared")
}

// Past maxStmts texts, statements run as text and still work.
func TestStatementsPastTheCacheRunAsText(t *testing.T) {
	t.Parallel()
	st, err := Open(filepath.Join(t.TempDir(), "orchestra.db"))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	for i := 0; ; i++ {
		st.wstmts.mu.Lock()
		n := len(st.wstmts.m)
		st.wstmts.mu.Unlock()
		if n >= maxStmts {
			break
		}
		require.NotNil(t, st.wstmts.get(ctx, fmt.Sprintf("SELECT %d", i)))
	}
	tk := sampleTask("full")
	require.NoError(t, st.TaskInsert(ctx, tk))
	for range 3 {
		require.NoError(t, st.DecisionInsert(ctx, store.Decision{ID: task.NewULID(tk.CreatedAt), TaskID: tk.ID, Text: "x", Author: "ops", At: tk.CreatedAt}))
	}
	require.False(t, st.wstmts.has(insertDecisionSQL))
	got, err := st.DecisionList(ctx, tk.ID)
	require.NoError(t, err)
	require.Len(t, got, 3)
}

// Writers that meet new statements while another prepares the texts met
// before do not wait for each other's locks: a transaction holds the
// writer's only connection while it looks a statement up.
func TestStatementsConcurrentWritersFinish(t *testing.T) {
	t.Parallel()
	st, err := Open(filepath.Join(t.TempDir(), "orchestra.db"))
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8*20)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk := sampleTask("writer-" + string(rune('a'+w)))
			if err := st.TaskInsert(ctx, tk); err != nil {
				errs <- err
				return
			}
			for range 20 {
				errs <- st.DecisionInsert(ctx, store.Decision{ID: task.NewULID(tk.CreatedAt), TaskID: tk.ID, Text: "x", Author: "ops", At: tk.CreatedAt})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, ctx.Err(), "the writers ran into the test's deadline")
}
