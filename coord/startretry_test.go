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

// lostCommitStore is a shared store whose next task transition commits and
// then fails, as a write whose commit reached the database but whose
// answer was lost (the connection reset or cut short by the call timeout
// during COMMIT); conflicts counts the transitions refused as a conflict
// after it. Past a bound it lets the start-up go on, failing the test,
// rather than loop for ever.
type lostCommitStore struct {
	store.Store
	t         *testing.T
	armed     atomic.Bool
	conflicts atomic.Int32
}

func (*lostCommitStore) Shared() bool { return true }

func (s *lostCommitStore) TaskTransition(ctx context.Context, p store.TaskTransitionParams) (store.TaskTransitionResult, error) {
	res, err := s.Store.TaskTransition(ctx, p)
	if err == nil && s.armed.CompareAndSwap(true, false) {
		return store.TaskTransitionResult{}, errors.New("store postgres://orchestra@127.0.0.1/orchestra: commit: unexpected EOF")
	}
	if errors.Is(err, store.ErrConflict) && s.conflicts.Add(1) > 20 {
		s.t.Errorf("the start-up retried a transition that already happened %d times: %v", s.conflicts.Load(), err)
		return store.TaskTransitionResult{Task: task.Task{ID: p.TaskID, State: task.StateQueued}}, nil
	}
	return res, err
}

// The fault run's engine that never finished starting: the requeue of a
// task its killed predecessor held committed, but the answer was lost, so
// the start-up retried the same transition from its stale view, refused as
// a conflict, for ever, and every command to it (an `add`) timed out. The
// retry starts from the row as it is now: the engine starts, the task is
// queued once, with no attempt charged, and is placed.
func TestFakeStartUpWhoseRequeueCommittedUnseenStarts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ls := &lostCommitStore{t: t}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ls.Store = st; return ls })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		b.launch(t)
		b.stop()
		// The engine died holding the task (a crash: its lease stayed).
		ctx := context.Background()
		tk, err := b.st.TaskGet(ctx, id)
		require.NoError(t, err)
		now := time.Now()
		_, err = b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: id, Holder: "console:999999999:gone",
			ExpectState: tk.State, GrantedAt: now, Deadline: now.Add(time.Hour)})
		require.NoError(t, err)

		ls.armed.Store(true)
		b.run(t, b.storePath(), nil)
		require.False(t, ls.armed.Load(), "the requeue ran")
		requeued := b.ledger(t, id, func(e task.Event) bool { return e.Kind == task.EvRefusal && e.Reason == task.ReasonLeaseOrphaned })
		require.Len(t, requeued, 1, "requeued once")
		b.launch(t)
		require.Equal(t, task.StateRunning, b.taskView(t, id).Task.State)
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt, "the crash was charged")
	})
}
