package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var fenceCases = []testCase{
	{"FencedWritesLandWhileTheTokenHolds", testFencedWritesLand},
	{"FencedWritesRefusedOnceOrphaned", testFencedWritesRefusedOrphaned},
	{"FencedWritesRefusedAfterANewGrant", testFencedWritesRefusedRegranted},
	{"EventAppendFencedOneTask", testEventAppendFencedOneTask},
	{"OrphanEndsTheLiveSessionsAtOnce", testOrphanEndsTheLiveSessions},
	{"AnUnleasedOrphanIsRefusedOnceAClaimLeasedTheTask", testUnleasedOrphanRefusedAfterAClaim},
	{"RequeueEndsTheLiveSessionsSoNoLaterSessionIsOverlapped", testRequeueEndsTheLiveSessions},
	{"CancelAndParkLeaveTheSessionToItsEngine", testCancelParkLeaveTheSession},
	{"SessionUpdateNeverRevivesAnEndedSession", testSessionUpdateNeverRevives},
}

// fencedWrites tries every fenced write of a run under token: a verdict, an
// event, a new session row, an update of sess and a seal. It returns their
// errors in that order.
func (b *bundle) fencedWrites(id task.ID, token int64, sess store.Session) []error {
	v := store.VerdictRecord{TaskID: id, SessionID: sess.ID, Phase: task.PhaseImplement, Token: token,
		Verdict: task.Verdict{Status: task.VerdictOK, Command: "true", At: b.at(time.Minute)}}
	fresh := b.newSession(id, time.Minute)
	fresh.Token, fresh.Fence = token, token
	sess.Status, sess.Fence = store.SessionExited, token
	_, sealErr := b.st.ArtifactSeal(b.ctx, store.ArtifactSealParams{TaskID: id, Token: token, Phase: task.PhasePlan,
		Content: []byte("plan"), At: b.at(time.Minute)})
	return []error{
		b.st.VerdictInsert(b.ctx, v, b.event(id, task.EvVerifyFinished)),
		b.st.EventAppendFenced(b.ctx, token, b.event(id, task.EvBranchPushed)),
		b.st.SessionInsert(b.ctx, fresh, b.event(id, task.EvSessionLaunched)),
		b.st.SessionUpdate(b.ctx, sess, b.event(id, task.EvSessionExited)),
		sealErr,
	}
}

// fencedFixture is a task leased under a token, with a confirmed session.
func (b *bundle) fencedFixture(t *testing.T) (task.Task, int64, store.Session) {
	t.Helper()
	tk := b.insertTask(t)
	l := b.grant(t, tk.ID, task.StateQueued, 0)
	s := b.newSession(tk.ID, time.Second)
	s.Token, s.Status = l.Token, store.SessionConfirmed
	require.NoError(t, b.st.SessionInsert(b.ctx, s))
	return tk, l.Token, s
}

func testFencedWritesLand(t *testing.T, b *bundle) {
	tk, token, s := b.fencedFixture(t)
	for i, err := range b.fencedWrites(tk.ID, token, s) {
		require.NoError(t, err, "write %d under the current token", i)
	}
	vs, err := b.st.VerdictList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Len(t, vs, 1)
	require.Len(t, b.events(t, tk.ID), 4)
	got, err := b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionExited, got.Status)
	require.Zero(t, got.Fence, "the fence is not stored")
}

// requireNothingLanded checks the refused writes left no trace.
func (b *bundle) requireNothingLanded(t *testing.T, id task.ID, s store.Session, events int) {
	t.Helper()
	vs, err := b.st.VerdictList(b.ctx, id)
	require.NoError(t, err)
	require.Empty(t, vs, "a stale verdict landed")
	require.Len(t, b.events(t, id), events, "a stale event landed")
	ss, err := b.st.SessionList(b.ctx, id)
	require.NoError(t, err)
	require.Len(t, ss, 1, "a stale session row landed")
	require.Equal(t, store.SessionKilled, ss[0].Status, "a stale session update landed (the orphan's requeue killed it)")
	as, err := b.st.ArtifactList(b.ctx, id)
	require.NoError(t, err)
	require.Empty(t, as, "a stale seal landed")
}

// An orphaned task keeps its token until the next grant, but its lease row
// is gone: the engine that lost it is refused from the takeover on, but for
// the end of its own session's row.
func testFencedWritesRefusedOrphaned(t *testing.T, b *bundle) {
	tk, token, s := b.fencedFixture(t)
	ev := b.event(tk.ID, task.EvRefusal)
	_, err := b.st.TaskTransition(b.ctx, store.Orphan(tk.ID, task.StateLeased, token, b.at(time.Second), ev))
	require.NoError(t, err)
	errs := b.fencedWrites(tk.ID, token, s)
	for i, err := range errs {
		if i == 3 {
			continue
		}
		require.ErrorIs(t, err, store.ErrStaleToken, "write %d after the orphan", i)
	}
	// The end of the engine's own session is recorded until a newer grant
	// (CheckGrant): no newer session can have started before it.
	require.NoError(t, errs[3], "a session row's update before any newer grant")
	got, err := b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionExited, got.Status)
	vs, err := b.st.VerdictList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Empty(t, vs, "a stale verdict landed")
	require.Len(t, b.events(t, tk.ID), 2, "a stale event landed (the orphan's and the session update's are all)")
	ss, err := b.st.SessionList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Len(t, ss, 1, "a stale session row landed")
	as, err := b.st.ArtifactList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Empty(t, as, "a stale seal landed")

	// The rescuer's own, unfenced write of the session still lands.
	s.Status = store.SessionKilled
	require.NoError(t, b.st.SessionUpdate(b.ctx, s))
}

func testFencedWritesRefusedRegranted(t *testing.T, b *bundle) {
	tk, token, s := b.fencedFixture(t)
	_, err := b.st.TaskTransition(b.ctx, store.Orphan(tk.ID, task.StateLeased, token, b.at(time.Second)))
	require.NoError(t, err)
	next := b.grant(t, tk.ID, task.StateQueued, 2*time.Second)
	require.Greater(t, next.Token, token)
	for i, err := range b.fencedWrites(tk.ID, token, s) {
		require.ErrorIs(t, err, store.ErrStaleToken, "write %d under the old token", i)
	}
	b.requireNothingLanded(t, tk.ID, s, 0)
	require.ErrorIs(t, b.st.EventAppendFenced(b.ctx, 0, b.event(tk.ID, task.EvBranchPushed)), store.ErrStaleToken,
		"token 0 never holds a task")
	require.NoError(t, b.st.EventAppendFenced(b.ctx, next.Token, b.event(tk.ID, task.EvBranchPushed)))
}

func testEventAppendFencedOneTask(t *testing.T, b *bundle) {
	a := b.insertTask(t)
	c := b.insertTask(t)
	l := b.grant(t, a.ID, task.StateQueued, 0)
	require.Error(t, b.st.EventAppendFenced(b.ctx, l.Token, b.event(a.ID, task.EvBranchPushed), b.event(c.ID, task.EvBranchPushed)))
	require.Error(t, b.st.EventAppendFenced(b.ctx, l.Token, b.event("", task.EvBranchPushed)))
	require.ErrorIs(t, b.st.EventAppendFenced(b.ctx, l.Token, b.event("01NOSUCHTASK0000000000000", task.EvBranchPushed)), store.ErrNotFound)
	require.Empty(t, b.events(t, a.ID))
	require.Empty(t, b.events(t, c.ID))
}

// A takeover's requeue ends the task's live sessions in its own
// transaction (EndLive): the task is never queued while its old session
// still counts as live (the fault run saw the old session's end land 18 to
// 30 ms after the new holder's session began). An ended session keeps its
// end, a session with continuity keeps it, and a refused requeue ends
// nothing.
func testOrphanEndsTheLiveSessions(t *testing.T, b *bundle) {
	tk, token, s := b.fencedFixture(t)
	done := b.newSession(tk.ID, 2*time.Second)
	done.Token, done.Status, done.EndedAt, done.Continuity = token, store.SessionExited, b.at(3*time.Second), `{"kept":true}`
	require.NoError(t, b.st.SessionInsert(b.ctx, done))
	end := &store.SessionsEnd{Status: store.SessionKilled, At: b.at(time.Minute),
		Continuity: func(s store.Session) string { return `{"lost":"` + s.ID + `"}` }}

	stale := store.Orphan(tk.ID, task.StateLeased, token+1, b.at(time.Minute), b.event(tk.ID, task.EvRefusal))
	stale.EndLive = end
	_, err := b.st.TaskTransition(b.ctx, stale)
	require.ErrorIs(t, err, store.ErrStaleToken)
	got, err := b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionConfirmed, got.Status, "a refused requeue ended a session")

	orphan := store.Orphan(tk.ID, task.StateLeased, token, b.at(time.Minute), b.event(tk.ID, task.EvRefusal))
	orphan.EndLive = end
	res, err := b.st.TaskTransition(b.ctx, orphan)
	require.NoError(t, err)
	require.Equal(t, task.StateQueued, res.Task.State)
	got, err = b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionKilled, got.Status, "the requeue left the old session live")
	require.True(t, got.EndedAt.Equal(b.at(time.Minute)), "ended at %s", got.EndedAt)
	require.Equal(t, `{"lost":"`+s.ID+`"}`, got.Continuity)
	kept, err := b.st.SessionGet(b.ctx, done.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionExited, kept.Status, "an ended session was ended again")
	require.Equal(t, `{"kept":true}`, kept.Continuity)
	live, err := b.st.SessionListLive(b.ctx)
	require.NoError(t, err)
	for _, l := range live {
		require.NotEqual(t, tk.ID, l.TaskID, "a session of the requeued task is still live")
	}
}

// An orphan of token 0 (its writer found the task live with no lease row)
// is refused once a lease row exists: the writer's view predates a requeue
// and a new claim that put the task back in the state it read, and the
// claim's holder, its session and its lease are left as they are (the
// fault run: a start-up's reconcile requeued a task 67 ms after another
// engine's claim and ended its new session, whose agent ran on).
func testUnleasedOrphanRefusedAfterAClaim(t *testing.T, b *bundle) {
	tk, token, s := b.fencedFixture(t)
	_, err := b.st.TaskTransition(b.ctx, store.Orphan(tk.ID, task.StateLeased, 0, b.at(time.Minute), b.event(tk.ID, task.EvRefusal)))
	require.ErrorIs(t, err, store.ErrStaleToken)
	require.ErrorIs(t, err, store.ErrConflict)
	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateLeased, got.State, "the refused orphan moved the task")
	l, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.NoError(t, err, "the refused orphan released the claim's lease")
	require.Equal(t, token, l.Token)
	sess, err := b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionConfirmed, sess.Status, "the refused orphan ended the claim's session")
}

// Every transition that puts a task back in the queue ends its sessions
// still recorded live in its own transaction, at its time, EndLive set or
// not: the fault run's engine had its session's end cut by a reset
// connection and held while its seal requeued the task; another engine
// claimed it, the held end was refused as stale (CheckGrant), and the
// session stayed confirmed until an unfenced rescue ended it at its own
// now, 759 ms after the new session began. The old engine's accurate end
// still lands before a newer grant, and is refused after it, so no
// session of the task ends after a later one began.
func testRequeueEndsTheLiveSessions(t *testing.T, b *bundle) {
	requeues := map[string]func(id task.ID, token int64, at time.Time) store.TaskTransitionParams{
		"seal": func(id task.ID, token int64, at time.Time) store.TaskTransitionParams {
			return store.Seal(id, task.StateLeased, token, at, task.PhaseImplement)
		},
		"requeue": func(id task.ID, token int64, at time.Time) store.TaskTransitionParams {
			return store.Requeue(id, task.StateLeased, token, at, task.ReasonLeaseExpired, true)
		},
		"orphan": func(id task.ID, token int64, at time.Time) store.TaskTransitionParams {
			return store.Orphan(id, task.StateLeased, token, at)
		},
		"move": func(id task.ID, token int64, at time.Time) store.TaskTransitionParams {
			return store.Move(id, task.StateLeased, task.ActRequeue, token, at, nil)
		},
	}
	for name, requeue := range requeues {
		tk, token, s := b.fencedFixture(t)
		launching := b.newSession(tk.ID, 2*time.Second)
		launching.Token = token
		require.NoError(t, b.st.SessionInsert(b.ctx, launching))

		// A requeue refused as stale ends nothing.
		_, err := b.st.TaskTransition(b.ctx, requeue(tk.ID, token+1, b.at(time.Minute)))
		require.ErrorIs(t, err, store.ErrStaleToken, name)
		got, err := b.st.SessionGet(b.ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, store.SessionConfirmed, got.Status, "%s: a refused requeue ended a session", name)

		res, err := b.st.TaskTransition(b.ctx, requeue(tk.ID, token, b.at(time.Minute)))
		require.NoError(t, err, name)
		require.Equal(t, task.StateQueued, res.Task.State, name)
		for _, id := range []string{s.ID, launching.ID} {
			got, err := b.st.SessionGet(b.ctx, id)
			require.NoError(t, err)
			require.Equal(t, store.SessionKilled, got.Status, "%s: the requeue left session %s live", name, id)
			require.True(t, got.EndedAt.Equal(b.at(time.Minute)), "%s: ended at %s, not the requeue's time", name, got.EndedAt)
		}
		live, err := b.st.SessionListLive(b.ctx)
		require.NoError(t, err)
		for _, l := range live {
			require.NotEqual(t, tk.ID, l.TaskID, "%s: a session of the requeued task is still live", name)
		}

		// The engine's own end, held through an outage, lands before a
		// newer grant, with its exit code and continuity.
		held := s
		held.Status, held.ExitCode, held.EndedAt, held.Continuity, held.Fence = store.SessionExited, 0, b.at(30*time.Second), `{"ended":"sealed"}`, token
		require.NoError(t, b.st.SessionUpdate(b.ctx, held), name)
		got, err = b.st.SessionGet(b.ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, store.SessionExited, got.Status, name)
		require.Equal(t, `{"ended":"sealed"}`, got.Continuity, "%s: the continuity the next brief reads was lost", name)

		// Another engine claims the task and starts a session; the old
		// engine's late write of the other session's end is refused.
		l, err := b.st.LeaseGrant(b.ctx, store.LeaseGrantParams{TaskID: tk.ID, Holder: "engine-b", ExpectState: task.StateQueued,
			GrantedAt: b.at(2 * time.Minute), Deadline: b.at(3 * time.Minute), Baseline: b.progress(2 * time.Minute)})
		require.NoError(t, err, name)
		next := b.newSession(tk.ID, 2*time.Minute)
		next.Token, next.Fence, next.Holder, next.Status = l.Token, l.Token, "engine-b", store.SessionConfirmed
		require.NoError(t, b.st.SessionInsert(b.ctx, next), name)
		late := launching
		late.Status, late.EndedAt, late.Fence = store.SessionExited, b.at(4*time.Minute), token
		require.ErrorIs(t, b.st.SessionUpdate(b.ctx, late), store.ErrStaleToken, name)

		ss, err := b.st.SessionList(b.ctx, tk.ID)
		require.NoError(t, err)
		require.Len(t, ss, 3, name)
		for _, e := range ss {
			if e.ID == next.ID {
				continue
			}
			require.False(t, e.EndedAt.IsZero(), "%s: session %s never ended", name, e.ID)
			require.False(t, e.EndedAt.After(next.StartedAt), "%s: session %s ended at %s, after session %s began at %s",
				name, e.ID, e.EndedAt, next.ID, next.StartedAt)
		}
	}
}

// A cancel or a park releases the lease before the engine stops its
// agent: the session stays live for that engine to end, with its exit
// code and continuity (CheckGrant), and an unpark, which queues the task
// again, ends it if the engine has not.
func testCancelParkLeaveTheSession(t *testing.T, b *bundle) {
	tk, token, s := b.fencedFixture(t)
	b.move(t, store.Cancel(tk.ID, task.StateLeased, token, b.at(time.Minute)))
	got, err := b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionConfirmed, got.Status, "the cancel ended the session its engine is stopping")
	s.Status, s.EndedAt, s.Continuity, s.Fence = store.SessionKilled, b.at(70*time.Second), `{"ended":"cancelled"}`, token
	require.NoError(t, b.st.SessionUpdate(b.ctx, s))

	tk, token, s = b.fencedFixture(t)
	b.move(t, store.Move(tk.ID, task.StateLeased, task.ActPark, token, b.at(time.Minute), nil))
	got, err = b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionConfirmed, got.Status, "the park ended the session its engine is stopping")
	b.move(t, store.Move(tk.ID, task.StateParked, task.ActUnpark, 0, b.at(2*time.Minute), nil))
	got, err = b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionKilled, got.Status, "the unpark queued the task with its session live")
	require.True(t, got.EndedAt.Equal(b.at(2*time.Minute)), "ended at %s", got.EndedAt)
}

// A session's end is final: an engine's write read before a requeue ended
// its session, or its held confirm, lands its other fields but leaves the
// session ended, so no session of a queued task is live again.
func testSessionUpdateNeverRevives(t *testing.T, b *bundle) {
	tk, token, s := b.fencedFixture(t)
	b.move(t, store.Requeue(tk.ID, task.StateLeased, token, b.at(time.Minute), task.ReasonLeaseExpired, true))
	s.Status, s.Brief, s.Fingerprint, s.Fence = store.SessionConfirmed, "# Brief\nDo it, again.", `{"argv":["x"]}`, token
	require.NoError(t, b.st.SessionUpdate(b.ctx, s))
	got, err := b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionKilled, got.Status, "an ended session was made live again")
	require.True(t, got.EndedAt.Equal(b.at(time.Minute)), "ended at %s", got.EndedAt)
	require.Equal(t, s.Brief, got.Brief)
	require.Equal(t, s.Fingerprint, got.Fingerprint)

	// An end rewrites an end: the engine's own, with its code, lands.
	s.Status, s.ExitCode, s.EndedAt = store.SessionExited, 3, b.at(30*time.Second)
	require.NoError(t, b.st.SessionUpdate(b.ctx, s))
	got, err = b.st.SessionGet(b.ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionExited, got.Status)
	require.Equal(t, 3, got.ExitCode)
	require.True(t, got.EndedAt.Equal(b.at(30*time.Second)), "ended at %s", got.EndedAt)
}
