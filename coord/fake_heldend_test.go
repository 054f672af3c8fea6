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

// heldEndStore is a shared network store whose first write of a session's
// end is cut (a reset connection), while the task's next requeue lands on a
// fresh connection and another engine, other, claims the task at once and
// starts its own session.
type heldEndStore struct {
	store.Store
	other   string
	cut     atomic.Bool
	claimed atomic.Bool
	next    atomic.Pointer[store.Session] // the other engine's session
}

func (*heldEndStore) Shared() bool { return true }

func (s *heldEndStore) SessionUpdate(ctx context.Context, ss store.Session, evs ...task.Event) error {
	ended := ss.Status == store.SessionExited || ss.Status == store.SessionKilled
	if ended && ss.Holder != s.other && !s.cut.Swap(true) {
		return errNoServer
	}
	return s.Store.SessionUpdate(ctx, ss, evs...)
}

func (s *heldEndStore) TaskTransition(ctx context.Context, p store.TaskTransitionParams) (store.TaskTransitionResult, error) {
	res, err := s.Store.TaskTransition(ctx, p)
	if err != nil || p.Action != task.ActRequeue || !s.cut.Load() || s.claimed.Swap(true) {
		return res, err
	}
	now := time.Now()
	l, gerr := s.Store.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: p.TaskID, Holder: s.other,
		ExpectState: task.StateQueued, GrantedAt: now, Deadline: now.Add(time.Hour)})
	if gerr != nil {
		return res, gerr
	}
	next := store.Session{ID: "other-session", TaskID: p.TaskID, Phase: res.Task.Phase, Attempt: 1, Harness: fakeHarness,
		Token: l.Token, Fence: l.Token, Holder: s.other, Status: store.SessionConfirmed, StartedAt: now}
	if ierr := s.Store.SessionInsert(ctx, next); ierr != nil {
		return res, ierr
	}
	s.next.Store(&next)
	return res, nil
}

// requireNoLateEnd checks the ledger rule the fault run's checker applies:
// every session of task id but the newest ended, and none ended after a
// later one began.
func requireNoLateEnd(t *testing.T, st store.Store, id task.ID) []store.Session {
	t.Helper()
	ss, err := st.SessionList(context.Background(), id)
	require.NoError(t, err)
	for i, s := range ss {
		for _, later := range ss[i+1:] {
			if later.Token <= s.Token {
				continue
			}
			require.False(t, s.EndedAt.IsZero(), "session %s (token %d, %s) never ended; session %s (token %d) began at %s",
				s.ID, s.Token, s.Status, later.ID, later.Token, later.StartedAt)
			require.False(t, s.EndedAt.After(later.StartedAt), "session %s (token %d) ended at %s, after session %s (token %d) began at %s",
				s.ID, s.Token, s.EndedAt, later.ID, later.Token, later.StartedAt)
		}
	}
	return ss
}

// A session whose end a reset connection cut, held through the outage,
// while its sealed phase's requeue landed and another engine claimed the
// task and started its session (the fault run: the held end was refused as
// stale, the session stayed confirmed, and a rescue ended it at its own
// now, 759 ms after the new session began): the requeue ended the session
// in its own transaction, so no later write, the held end's or a start-up
// check's, ends it after the new session began.
func TestFakeAHeldSessionEndThenASealAndAClaimLeaveNoOverlap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := &heldEndStore{other: liveHolder(t)}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { hs.Store = st; return hs })
		id := b.add(t, task.Pipeline{task.PhasePlan, task.PhaseImplement})
		a, _ := b.launch(t)
		first := a.Params().SessionID

		a.Finish(nil)
		b.waitEvent(t, func(e task.Event) bool { return e.Kind == task.EvPhaseAdvanced && e.TaskID == id })
		b.waitEvent(t, kindIs(task.EvStoreRecovered)) // the held end is written again
		b.barrier(t)
		require.True(t, hs.claimed.Load(), "no other engine claimed the requeued task:\n%s", b.dump())
		next := hs.next.Load()
		require.NotNil(t, next)
		ss := requireNoLateEnd(t, b.st, id)
		require.Len(t, ss, 2, b.dump())
		require.Equal(t, first, ss[0].ID)
		require.NotEqual(t, store.SessionConfirmed, ss[0].Status)

		// A later start-up's check of the live sessions writes no end at
		// its own now.
		time.Sleep(time.Minute)
		b.restart(t)
		b.barrier(t)
		requireNoLateEnd(t, b.st, id)
		got, err := b.st.SessionGet(context.Background(), next.ID)
		require.NoError(t, err)
		require.Equal(t, store.SessionConfirmed, got.Status, "the other engine's live session was ended")
	})
}

// A session row left live under an old token, of a task another engine
// was granted since and runs a session of (a store written before a
// requeue ended its task's live sessions): the start-up check, whose
// mark is fenced by the session's own token, does not end it at its own
// now, after the newer session began, nor touches the newer session.
func TestFakeStartUpCheckEndsNoSessionAfterANewerOneBegan(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupShared(t)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)
		b.stop()
		ctx := context.Background()
		left := b.lastSession(t, id)
		left.ID, left.Status, left.EndedAt, left.Holder = left.ID+"-left", store.SessionConfirmed, time.Time{}, "console:999999999:gone"
		require.NoError(t, b.st.SessionInsert(ctx, left))

		time.Sleep(time.Second)
		other := liveHolder(t)
		l, err := b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: id, Holder: other,
			ExpectState: task.StateQueued, GrantedAt: time.Now(), Deadline: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		require.Greater(t, l.Token, left.Token)
		next := store.Session{ID: "other-session", TaskID: id, Phase: task.PhaseImplement, Attempt: 1, Harness: fakeHarness,
			Token: l.Token, Fence: l.Token, Holder: other, Status: store.SessionConfirmed, StartedAt: time.Now()}
		require.NoError(t, b.st.SessionInsert(ctx, next))

		time.Sleep(time.Minute)
		b.run(t, b.storePath(), nil)
		b.barrier(t)
		got, err := b.st.SessionGet(ctx, left.ID)
		require.NoError(t, err)
		require.False(t, got.EndedAt.After(next.StartedAt), "the start-up check ended session %s at %s, after session %s began at %s",
			left.ID, got.EndedAt, next.ID, next.StartedAt)
		got, err = b.st.SessionGet(ctx, next.ID)
		require.NoError(t, err)
		require.Equal(t, store.SessionConfirmed, got.Status, "the other engine's live session was ended")
	})
}
