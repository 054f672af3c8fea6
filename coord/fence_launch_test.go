package coord

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// takeoverAtInsertStore is a shared store where another engine takes the
// task over right after this engine recorded its new session's row, as a
// takeover that lands while the agent starts does.
type takeoverAtInsertStore struct {
	store.Store
	other string
	done  atomic.Bool
}

func (*takeoverAtInsertStore) Shared() bool { return true }

func (s *takeoverAtInsertStore) SessionInsert(ctx context.Context, sess store.Session, evs ...task.Event) error {
	if err := s.Store.SessionInsert(ctx, sess, evs...); err != nil || s.done.Swap(true) {
		return err
	}
	l, err := s.Store.LeaseGet(ctx, sess.TaskID)
	if err != nil {
		return err
	}
	return takeOver(ctx, s.Store, sess.TaskID, task.StateLeased, l.Token, s.other)
}

// takeOver moves task id's lease under token to holder other, as another
// engine's takeover does: the task is orphaned from state and leased anew.
func takeOver(ctx context.Context, st store.Store, id task.ID, state task.State, token int64, other string) error {
	if _, err := st.TaskTransition(ctx, store.Orphan(id, state, token, time.Now())); err != nil {
		return err
	}
	_, err := st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: id, Holder: other,
		ExpectState: task.StateQueued, GrantedAt: time.Now(), Deadline: time.Now().Add(time.Hour)})
	return err
}

// A session whose task another engine took over while it started records
// no session.launched under the lost token (the fault run's stale write
// landed 316 ms after the new holder's session began): the session is
// stopped and the task left to its new holder.
func TestFakeALaunchFencedOutWhileItStartsRecordsNothingAndStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ts := &takeoverAtInsertStore{other: liveHolder(t)}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ts.Store = st; return ts })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitEvent(t, refusalOf(task.ReasonStaleLeaseToken))
		<-a.Done()
		b.barrier(t)
		require.Empty(t, b.ledger(t, id, kindIs(task.EvSessionLaunched)), "session.launched landed under a stale token:\n%s", b.dump())
		l, err := b.st.LeaseGet(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, ts.other, l.Holder, "the new holder's lease was touched")
		tk, err := b.st.TaskGet(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, task.StateLeased, tk.State, "the task was moved under the old token")
	})
}

// launchedDownStore is a network store that stops answering at a
// session's session.launched, while another engine takes the task over.
type launchedDownStore struct {
	store.Store
	other string
	done  atomic.Bool
}

func (s *launchedDownStore) Shared() bool { return true }

func (s *launchedDownStore) EventAppendFenced(ctx context.Context, token int64, evs ...task.Event) error {
	if len(evs) == 0 || evs[0].Kind != task.EvSessionLaunched || s.done.Swap(true) {
		return s.Store.EventAppendFenced(ctx, token, evs...)
	}
	if err := takeOver(ctx, s.Store, evs[0].TaskID, task.StateLeased, token, s.other); err != nil {
		return err
	}
	return errNoServer
}

// A fenced write held through an outage stays fenced: when the store
// answers, a write of a lease another engine took meanwhile is refused,
// not appended (the fault run's session.launched, held through a
// pg_ctl restart, landed 150 ms after the new holder's session began),
// and the session of the lost lease is stopped.
func TestFakeAFencedWriteHeldThroughAnOutageIsStillFenced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := &launchedDownStore{other: liveHolder(t)}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitEvent(t, kindIs(task.EvStoreRecovered))
		b.waitEvent(t, refusalOf(task.ReasonStaleLeaseToken))
		<-a.Done()
		b.barrier(t)
		require.Empty(t, b.ledger(t, id, kindIs(task.EvSessionLaunched)), "a held session.launched landed under a stale token:\n%s", b.dump())
		l, err := b.st.LeaseGet(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, ds.other, l.Holder, "the new holder's lease was touched")
	})
}

// takeoverAtBriefStore is a shared store where another engine takes the
// task over just before this engine records its session's brief.delivered.
type takeoverAtBriefStore struct {
	store.Store
	other string
	done  atomic.Bool
}

func (*takeoverAtBriefStore) Shared() bool { return true }

func (s *takeoverAtBriefStore) EventAppendFenced(ctx context.Context, token int64, evs ...task.Event) error {
	if len(evs) == 0 || evs[0].Kind != task.EvBriefDelivered || s.done.Swap(true) {
		return s.Store.EventAppendFenced(ctx, token, evs...)
	}
	tk, err := s.Store.TaskGet(ctx, evs[0].TaskID)
	if err != nil {
		return err
	}
	if err := takeOver(ctx, s.Store, tk.ID, tk.State, token, s.other); err != nil {
		return err
	}
	return s.Store.EventAppendFenced(ctx, token, evs...)
}

// A brief typed into a session whose task another engine took over
// meanwhile records no brief.delivered under the lost token (the fault
// run: a stepped-down engine's brief.delivered landed after the new
// holder's session began): the session is stopped and the task left to
// its new holder.
func TestFakeABriefDeliveredAfterATakeoverRecordsNothingAndStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ts := &takeoverAtBriefStore{other: liveHolder(t)}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ts.Store = st; return ts })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		a.Confirm()
		require.Equal(t, "brief", string(a.NextInput().Kind))
		b.waitEvent(t, refusalOf(task.ReasonStaleLeaseToken))
		<-a.Done()
		b.barrier(t)
		require.Empty(t, b.ledger(t, id, kindIs(task.EvBriefDelivered)), "brief.delivered landed under a stale token:\n%s", b.dump())
		l, err := b.st.LeaseGet(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, ts.other, l.Holder, "the new holder's lease was touched")
	})
}
