package coord

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// lostClaimStore is a shared network store whose next lease claim commits
// and then fails, as a claim whose COMMIT reached PostgreSQL but whose
// answer was lost (the connection reset, or cut short by the call
// timeout): the task is leased to this engine in the store, and the
// engine was told the claim failed. The read that follows fails too, as
// the same reset's does: the engine's view keeps the task queued.
type lostClaimStore struct {
	store.Store
	armed, reading atomic.Bool
}

func (s *lostClaimStore) TaskGet(ctx context.Context, id task.ID) (task.Task, error) {
	if s.reading.CompareAndSwap(true, false) {
		return task.Task{}, errNoServer
	}
	return s.Store.TaskGet(ctx, id)
}

func (*lostClaimStore) Shared() bool { return true }

func (s *lostClaimStore) LeaseClaim(ctx context.Context, p store.LeaseClaimParams) (store.TaskTransitionResult, error) {
	res, err := s.Store.LeaseClaim(ctx, p)
	if err == nil && s.armed.CompareAndSwap(true, false) {
		s.reading.Store(true)
		return store.TaskTransitionResult{}, errors.New("store postgres://orchestra@127.0.0.1/orchestra: commit: unexpected EOF")
	}
	return res, err
}

// The fault run's lost task: a claim whose commit landed unseen left the
// task leased to a live engine that did not know it held it. Its ledger
// showed the lease as another engine's write, so the engine took the task
// for one another engine runs; its strand check passed over it, and every
// other engine's rescue saw a live holder: the task stayed leased for
// good. The claim's lost answer is an outage, not a refused move; once the
// store answers, the engine requeues the lease it holds with nothing
// behind it, not charged, and the task runs.
func TestFakeAClaimThatCommittedUnseenIsRequeuedAndRuns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ls := &lostClaimStore{}
		ls.armed.Store(true)
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ls.Store = st; return ls })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		requeued := func(e task.Event) bool {
			return e.TaskID == id && e.Kind == task.EvTaskRequeued && e.Reason == task.ReasonLeaseOrphaned
		}
		b.waitEvent(t, requeued)
		require.False(t, ls.armed.Load(), "the claim ran")
		require.False(t, ls.reading.Load(), "the view was read again")
		a, _ := b.launch(t)
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt, "the lost claim was charged:\n%s", b.dump())
		require.Len(t, b.ledger(t, id, requeued), 1, "requeued once:\n%s", b.dump())
		require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonIllegalTransition)), "a lost answer is no illegal move:\n%s", b.dump())
	})
}

// The fault run's second lost task: a session's confirm (its task's move
// from leased to running) that a network store did not answer was
// refused, and nothing confirmed the session again; it waited at its
// prompt for a brief that never came, the task leased, until the lease
// ran out twenty minutes later, charged. The confirm is made once the
// store answers, the brief typed, and the task goes on uncharged.
func TestFakeAConfirmDuringAnOutageIsMadeWhenTheStoreIsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := &transitionDownStore{}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)

		ds.fail.Store(1) // the next transition: the confirm
		a.Confirm()
		b.waitOnce(t, task.EvSessionConfirmed, a.Params().SessionID)
		b.briefedToReviewAtAttemptOne(t, a, id)
		require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonStaleLeaseToken)), "a store's outage is no stale lease:\n%s", b.dump())
		require.NotEmpty(t, b.ledger(t, "", kindIs(task.EvStoreRecovered)))
		ss, err := b.st.SessionList(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, ss, 1, "the session was replaced")
	})
}
