package coord

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// downStore is a network store that can be made not to answer: while down,
// appending events and listing engines fail as a restarting PostgreSQL's
// calls do. It has no Path, so the coordinator takes it for a network
// store.
type downStore struct {
	store.Store
	down atomic.Bool
}

var errNoServer = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (s *downStore) EventAppend(ctx context.Context, evs ...task.Event) error {
	if s.down.Load() {
		return errNoServer
	}
	return s.Store.EventAppend(ctx, evs...)
}

func (s *downStore) EngineList(ctx context.Context) ([]store.Engine, error) {
	if s.down.Load() {
		return nil, errNoServer
	}
	return s.Store.EngineList(ctx)
}

// A network store's outage pauses placement with PostgreSQL's advice, not
// SQLite's; the event that could not be appended meanwhile is appended
// once, when the store answers again; the outage then clears by itself and
// a task added during it is placed.
func TestFakeStoreOutageIsWeatheredAndPlacementResumes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := &downStore{}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		first := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)

		ds.down.Store(true)
		res, err := b.c.Do(context.Background(), Command{Kind: CmdResubmit, TaskID: first, Author: "ana"})
		require.NoError(t, err)
		require.Equal(t, a.Params().SessionID, res.SessionID)
		fault := b.waitEvent(t, refusalOf(task.ReasonStoreFailed)).Text
		require.Contains(t, fault, "PostgreSQL")
		require.Contains(t, fault, "resumes by itself")
		require.Contains(t, fault, "pg_isready")
		require.NotContains(t, fault, "df -h", "a database server's outage is not a disk's")
		require.Contains(t, fault, b.c.Snapshot().StoreFault)

		// A task added during the outage waits: placement has paused.
		second := b.add(t, task.Pipeline{task.PhaseImplement})
		time.Sleep(time.Minute)
		b.barrier(t)
		require.Equal(t, task.StateQueued, b.taskView(t, second).Task.State, "placed while the store did not answer")

		ds.down.Store(false)
		b.waitEvent(t, kindIs(task.EvStoreRecovered))
		b.launch(t) // the second task, placed by itself
		require.Empty(t, b.c.Snapshot().StoreFault)

		evs, err := b.st.EventList(context.Background(), store.EventListParams{})
		require.NoError(t, err)
		resubmitted := 0
		for _, ev := range evs {
			if ev.Kind == task.EvResubmitted && ev.TaskID == first {
				resubmitted++
			}
		}
		require.Equal(t, 1, resubmitted, "the event held during the outage is in the ledger once")
	})
}

// For a TTL after the store answers again, no other engine's task is
// taken over: every engine's heartbeats were blocked by the same outage.
func TestTakeoverWaitsATTLAfterAnOutage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := &Coordinator{sw: storeWatch{ttl: 30 * time.Second}}
	require.False(t, c.sw.takeoverPaused(now), "no outage seen: takeovers as usual")
	c.sw.outage = true
	require.True(t, c.sw.takeoverPaused(now))
	c.sw.outage, c.sw.back = false, now
	require.True(t, c.sw.takeoverPaused(now.Add(29*time.Second)))
	require.False(t, c.sw.takeoverPaused(now.Add(30*time.Second)))
}

// sealDownStore is downStore whose artifact seals fail too while down.
type sealDownStore struct{ *downStore }

func (s sealDownStore) ArtifactSeal(ctx context.Context, p store.ArtifactSealParams) (store.Artifact, error) {
	if s.down.Load() {
		return store.Artifact{}, errNoServer
	}
	return s.Store.ArtifactSeal(ctx, p)
}

// A phase that finishes while a network store does not answer is neither
// refused nor charged (the fault run: a seal cut short by the call
// timeout during a partition ran the phase again at attempt 2): its seal
// waits, with the session, until the store answers, and the task goes on
// from there at attempt 1.
func TestFakeASealDuringAnOutageWaitsForTheStoreAndIsNotCharged(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := sealDownStore{&downStore{}}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)

		ds.down.Store(true)
		a.Finish(nil)
		b.waitEvent(t, refusalOf(task.ReasonStoreFailed))
		time.Sleep(time.Minute)
		b.barrier(t)
		require.Equal(t, task.StateRunning, b.taskView(t, id).Task.State, "moved on while the seal could not be stored")

		ds.down.Store(false)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt, "the outage was charged:\n%s", b.dump())
		require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonArtifactNotSealed)), "refused for the store's outage")
		require.Len(t, b.ledger(t, id, kindIs(task.EvArtifactSealed)), 1)
	})
}

// insertDownStore fails the next session insert, as a network store that
// does not answer for a moment does.
type insertDownStore struct {
	store.Store
	fail atomic.Int32
}

func (s *insertDownStore) SessionInsert(ctx context.Context, ss store.Session, evs ...task.Event) error {
	if s.fail.Add(-1) >= 0 {
		return errNoServer
	}
	return s.Store.SessionInsert(ctx, ss, evs...)
}

// A session whose row a network store did not take is not started until
// the row is recorded (the fault run: a session launched after its insert
// failed ran and pushed with no row, where no check could see it): the
// launch waits for the store, and the session that then runs has its row.
func TestFakeALaunchWhoseRowWasNotTakenWaitsForTheStore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := &insertDownStore{}
		ds.fail.Store(2)
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		b.waitEvent(t, refusalOf(task.ReasonStoreFailed))
		a, _ := b.launch(t)
		s, err := b.st.SessionGet(context.Background(), a.Params().SessionID)
		require.NoError(t, err, "the running session has no row")
		require.Equal(t, id, s.TaskID)
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt, b.dump())
		ss, err := b.st.SessionList(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, ss, 1, "one session, recorded")
	})
}

// transitionDownStore fails the next task transitions, as a network store
// that does not answer for a moment does.
type transitionDownStore struct {
	store.Store
	fail atomic.Int32
}

func (s *transitionDownStore) TaskTransition(ctx context.Context, p store.TaskTransitionParams) (store.TaskTransitionResult, error) {
	if s.fail.Add(-1) >= 0 {
		return store.TaskTransitionResult{}, errNoServer
	}
	return s.Store.TaskTransition(ctx, p)
}

// A green gate's move to review that a network store did not take is made
// once it answers (the fault run: a pg_ctl restart at that move left the
// task running, its lease held and its session gone, for good).
func TestFakeAMoveDuringAnOutageIsMadeWhenTheStoreIsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := &transitionDownStore{}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		ds.fail.Store(1) // the next transition: the gate's move to review
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt)
		require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonIllegalTransition)), "a store's outage is no illegal move")
		require.NotEmpty(t, b.ledger(t, "", kindIs(task.EvStoreRecovered)))
	})
}

// briefDownStore is downStore whose dead-end list, a brief's last read,
// fails too while down.
type briefDownStore struct{ *downStore }

func (s briefDownStore) DeadEndList(ctx context.Context, id task.ID) ([]store.DeadEnd, error) {
	if s.down.Load() {
		return nil, errNoServer
	}
	return s.Store.DeadEndList(ctx, id)
}

// A brief that a network store's outage kept from being rendered is
// rendered once the store answers, and typed into the session that waited
// at its prompt (the fault run: a pg_ctl restart cut the brief's read, the
// session was stopped and the task charged an attempt). A correction made
// meanwhile reaches the session once.
func TestFakeABriefDuringAnOutageIsDeliveredWhenTheStoreIsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := briefDownStore{&downStore{}}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)

		ds.down.Store(true)
		a.Confirm()
		b.waitEvent(t, refusalOf(task.ReasonStoreFailed))
		time.Sleep(time.Minute)
		b.barrier(t)
		require.Empty(t, a.Typed(), "typed into the session before its brief")
		require.Equal(t, task.StateRunning, b.taskView(t, id).Task.State, b.dump())

		ds.down.Store(false)
		b.briefedToReviewAtAttemptOne(t, a, id)
		require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonDeliveryFailed)), "refused for the store's outage")
		ss, err := b.st.SessionList(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, ss, 1, "the session was replaced")
	})
}
