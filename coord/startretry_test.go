package coord

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// restartingStore is a shared store (as PostgreSQL) whose database is
// restarting until up: every store call of an engine's start-up fails
// before then as PostgreSQL's do when `pg_ctl restart` terminates the
// backends. refused counts the calls it refused.
type restartingStore struct {
	store.Store
	up      time.Time
	refused atomic.Int32
}

func (*restartingStore) Shared() bool { return true }

var errTerminated = errors.New("store postgres://orchestra@127.0.0.1/orchestra: take the write lock: " +
	"FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")

func (s *restartingStore) down() bool {
	if time.Now().Before(s.up) {
		s.refused.Add(1)
		return true
	}
	return false
}

func (s *restartingStore) Listen(ctx context.Context) (<-chan struct{}, error) {
	if s.down() {
		return nil, errTerminated
	}
	return s.Store.Listen(ctx)
}

func (s *restartingStore) EventLastSeq(ctx context.Context) (int64, error) {
	if s.down() {
		return 0, errTerminated
	}
	return s.Store.EventLastSeq(ctx)
}

func (s *restartingStore) TaskSummaries(ctx context.Context) ([]store.TaskSummary, error) {
	if s.down() {
		return nil, errTerminated
	}
	return s.Store.TaskSummaries(ctx)
}

func (s *restartingStore) LeaseList(ctx context.Context) ([]lease.Lease, error) {
	if s.down() {
		return nil, errTerminated
	}
	return s.Store.LeaseList(ctx)
}

func (s *restartingStore) EngineList(ctx context.Context) ([]store.Engine, error) {
	if s.down() {
		return nil, errTerminated
	}
	return s.Store.EngineList(ctx)
}

// The randomized fault run's first finding: a `pg_ctl restart` just as an
// engine (re)started made it exit ("take the write lock: FATAL:
// terminating connection due to administrator command"). An engine on a
// network store that does not answer at start-up waits for it instead,
// retrying with a backoff capped at startRetryMax, says so once, with the
// database's advice, and once it answers starts and places work.
func TestFakeStartUpWaitsForARestartingDatabase(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		began := time.Now()
		rs := &restartingStore{up: began.Add(7 * time.Second)}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { rs.Store = st; return rs })
		started := time.Since(began)
		require.GreaterOrEqual(t, started, 7*time.Second, "started while the database did not answer")
		require.Less(t, started, 7*time.Second+startRetryMax+time.Millisecond, "the backoff is capped")
		// 50 ms doubling to the cap: a handful of tries, not a busy loop.
		require.Greater(t, rs.refused.Load(), int32(3))
		require.Less(t, rs.refused.Load(), int32(15))

		ev := b.waitEvent(t, refusalOf(task.ReasonStoreFailed))
		require.Contains(t, ev.Text, "terminating connection")
		require.Contains(t, ev.Text, "pg_isready")
		require.Contains(t, ev.Text, "starts once it answers")

		// Started for real: a task added now is placed and its agent runs.
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		b.launch(t)
		require.Equal(t, task.StateRunning, b.taskView(t, id).Task.State)
		told := 0
		for _, ev := range b.events {
			if ev.Reason == task.ReasonStoreFailed {
				told++
			}
		}
		require.Equal(t, 1, told, "the operator is told once, not at each try")
	})
}
