package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var transitionCases = []testCase{
	{"TransitionAppliesTheLifecycleInOneWrite", testTransitionWrites},
	{"TransitionRefusesWhatApplyForbids", testTransitionIllegal},
	{"TransitionFencedByToken", testTransitionStale},
	{"TransitionRaceClaim", raceCase(task.StateQueued, task.StateLeased, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Lease(tk.ID, token, "engine-x", b.at(time.Hour), b.at(2*time.Hour))
	})},
	{"TransitionRaceConfirm", raceCase(task.StateLeased, task.StateRunning, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Confirm(tk.ID, token, b.at(time.Hour))
	})},
	{"TransitionRaceRenew", testTransitionRaceRenew},
	{"TransitionRaceOrphan", raceCase(task.StateRunning, task.StateQueued, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Orphan(tk.ID, tk.State, token, b.at(time.Hour))
	})},
	{"TransitionRaceRequeue", raceCase(task.StateRunning, task.StateQueued, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Requeue(tk.ID, tk.State, token, b.at(time.Hour), task.ReasonLeaseExpired, true)
	})},
	{"TransitionRaceSeal", raceCase(task.StateRunning, task.StateQueued, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Seal(tk.ID, tk.State, token, b.at(time.Hour), task.PhaseImplement)
	})},
	{"TransitionRaceFinish", raceCase(task.StateRunning, task.StateAwaitingReview, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Finish(tk.ID, token, b.at(time.Hour))
	})},
	{"TransitionRaceApprove", raceCase(task.StateAwaitingReview, task.StateCompleted, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Approve(tk.ID, token, b.at(time.Hour))
	})},
	{"TransitionRaceRetry", raceCase(task.StateFailed, task.StateQueued, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Retry(tk.ID, tk.State, token, b.at(time.Hour))
	})},
	{"TransitionRaceCancel", raceCase(task.StateRunning, task.StateCancelled, func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams {
		return store.Cancel(tk.ID, tk.State, token, b.at(time.Hour))
	})},
	{"LiveBranchHoldsOneTask", testLiveBranch},
}

// move applies p and requires it to succeed.
func (b *bundle) move(t *testing.T, p store.TaskTransitionParams) store.TaskTransitionResult {
	t.Helper()
	res, err := b.st.TaskTransition(b.ctx, p)
	require.NoError(t, err)
	return res
}

// stage returns a task brought to state through the transitions, and its
// token (1: one grant; a queued task was leased once and requeued, so its
// token is 1 as well).
func (b *bundle) stage(t *testing.T, state task.State) (task.Task, int64) {
	t.Helper()
	tk := b.insertTask(t)
	l := b.grant(t, tk.ID, task.StateQueued, 0)
	at := b.at(time.Second)
	switch state {
	case task.StateLeased:
	case task.StateQueued:
		b.move(t, store.Requeue(tk.ID, task.StateLeased, l.Token, at, task.ReasonLeaseExpired, true))
	case task.StateFailed:
		b.move(t, store.Move(tk.ID, task.StateLeased, task.ActFail, l.Token, at, nil))
	default:
		b.move(t, store.Confirm(tk.ID, l.Token, at))
		if state == task.StateAwaitingReview {
			b.move(t, store.Finish(tk.ID, l.Token, at))
		}
	}
	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, state, got.State)
	return got, l.Token
}

// raceCase has two writers make the same transition of a task in from at
// once, under the same token: one wins, the other's view is stale.
func raceCase(from, to task.State, params func(b *bundle, tk task.Task, token int64) store.TaskTransitionParams) func(*testing.T, *bundle) {
	return func(t *testing.T, b *bundle) {
		tk, token := b.stage(t, from)
		evs := []task.Event{b.event(tk.ID, task.EvTaskRequeued), b.event(tk.ID, task.EvTaskRequeued)}
		errs := race(func(i int) error {
			p := params(b, tk, token)
			p.Events = func(task.Task) []task.Event { return evs[i : i+1] }
			_, err := b.st.TaskTransition(b.ctx, p)
			return err
		})
		winner := oneWins(t, errs)
		got, err := b.st.TaskGet(b.ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, to, got.State)
		all := b.events(t, tk.ID)
		last := all[len(all)-1]
		last.Seq = 0
		require.Equal(t, evs[winner], last, "only the winner's event is in the ledger")
		for _, e := range all {
			require.NotEqual(t, evs[1-winner].ID, e.ID, "the refused write appended nothing")
		}
		l, err := b.st.LeaseGet(b.ctx, tk.ID)
		if to.Live() {
			require.NoError(t, err)
			require.GreaterOrEqual(t, l.Token, token)
		} else {
			require.ErrorIs(t, err, store.ErrNotFound, "a move out of the live states releases the lease")
		}
	}
}

// race runs two writers at once and returns their errors.
func race(write func(i int) error) [2]error {
	var (
		errs  [2]error
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = write(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWins requires one nil error and one stale-token error, and returns
// the winner's index.
func oneWins(t *testing.T, errs [2]error) int {
	t.Helper()
	winner := 0
	if errs[0] != nil {
		winner = 1
	}
	require.NoError(t, errs[winner], "one writer wins")
	require.ErrorIs(t, errs[1-winner], store.ErrStaleToken, "the other finds its token stale")
	return winner
}

// The holder of a superseded lease and the holder of the current one renew
// at once: the current one's renewal lands, the old one's is stale.
func testTransitionRaceRenew(t *testing.T, b *bundle) {
	tk, _ := b.stage(t, task.StateQueued)
	_, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	old := lease.Lease{TaskID: tk.ID, Holder: "slot-1@host", Token: 1, GrantedAt: b.at(0), Deadline: b.at(time.Minute)}
	cur := b.move(t, store.Lease(tk.ID, 1, "slot-2@host", b.at(time.Minute), b.at(2*time.Minute))).Lease
	require.EqualValues(t, 2, cur.Token)
	renewed := [2]lease.Lease{old, cur}
	for i := range renewed {
		renewed[i].Deadline, renewed[i].Renewals = b.at(time.Hour), renewed[i].Renewals+1
	}
	errs := race(func(i int) error {
		_, err := b.st.TaskTransition(b.ctx, store.Renew(renewed[i], b.at(30*time.Minute)))
		return err
	})
	require.Equal(t, 1, oneWins(t, errs), "the current holder's renewal wins")
	got, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, renewed[1], got)
	stored, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateLeased, stored.State, "a renewal keeps the state")
}

func testTransitionWrites(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	ev := b.event(tk.ID, task.EvTaskLeased)
	var seen task.Task
	p := store.Lease(tk.ID, 0, "engine-a", b.at(time.Second), b.at(time.Minute))
	p.Events = func(before task.Task) []task.Event { seen = before; return []task.Event{ev} }
	res := b.move(t, p)
	require.Equal(t, tk, res.Before)
	require.Equal(t, tk, seen, "Events sees the task as stored before")
	want := tk
	want.State, want.Attempt, want.UpdatedAt = task.StateLeased, 1, b.at(time.Second)
	require.Equal(t, want, res.Task)
	stored, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, want, stored)
	require.Equal(t, lease.Lease{TaskID: tk.ID, Holder: "engine-a", Token: 1, GrantedAt: b.at(time.Second),
		Deadline: b.at(time.Minute), Baseline: lease.Progress{At: b.at(time.Second)}, LastProgressAt: b.at(time.Second)}, res.Lease)
	b.requireEvents(t, tk.ID, ev)

	// A requeue with an edit writes the edit and releases the lease.
	res = b.move(t, store.Requeue(tk.ID, task.StateLeased, 1, b.at(2*time.Second), task.ReasonLaunchFailed, false))
	require.True(t, res.Released)
	stored, err = b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	want.State, want.Attempt, want.Reason, want.UpdatedAt = task.StateQueued, 0, string(task.ReasonLaunchFailed), b.at(2*time.Second)
	require.Equal(t, want, stored)
	_, err = b.st.LeaseGet(b.ctx, tk.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	token, err := b.st.TaskToken(b.ctx, tk.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, token, "the task keeps its token, so the next grant is larger")
}

func testTransitionIllegal(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	_, err := b.st.TaskTransition(b.ctx, store.Approve(tk.ID, 0, b.at(time.Second), b.event(tk.ID, task.EvTaskCompleted)))
	require.ErrorIs(t, err, store.ErrConflict, "approve expects awaiting-review")
	_, err = b.st.TaskTransition(b.ctx, store.Move(tk.ID, "", task.ActConfirm, 0, b.at(time.Second), nil, b.event(tk.ID, task.EvSessionConfirmed)))
	var te *task.TransitionError
	require.ErrorAs(t, err, &te, "a queued task cannot be confirmed")
	_, err = b.st.TaskTransition(b.ctx, store.Move(tk.ID, "", task.ActPark, 0, b.at(time.Second),
		func(n *task.Task) { n.State = task.StateRunning }))
	require.Error(t, err, "an edit may not set the state")
	_, err = b.st.TaskTransition(b.ctx, store.Confirm("01NOSUCHTASK0000000000000", 1, b.at(time.Second)))
	require.ErrorIs(t, err, store.ErrNotFound)
	stored, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, tk, stored, "refused writes change nothing")
	require.Empty(t, b.events(t, tk.ID))
}

func testTransitionStale(t *testing.T, b *bundle) {
	tk, token := b.stage(t, task.StateRunning)
	_, err := b.st.TaskTransition(b.ctx, store.Finish(tk.ID, token+1, b.at(time.Hour), b.event(tk.ID, task.EvTaskRequeued)))
	require.ErrorIs(t, err, store.ErrStaleToken, "a token the task never had")
	b.move(t, store.Requeue(tk.ID, task.StateRunning, token, b.at(time.Hour), task.ReasonLeaseExpired, true))
	_, err = b.st.TaskTransition(b.ctx, store.Move(tk.ID, "", task.ActPark, token, b.at(time.Hour), nil))
	require.NoError(t, err, "a queued task without a lease is parked under the token it still carries")
	_, err = b.st.TaskTransition(b.ctx, store.Renew(lease.Lease{TaskID: tk.ID, Token: token}, b.at(time.Hour)))
	require.ErrorIs(t, err, store.ErrStaleToken, "a released lease cannot be renewed")
}

func testLiveBranch(t *testing.T, b *bundle) {
	first := b.newTask()
	first.Branch = "orchestra/shared"
	require.NoError(t, b.st.TaskInsert(b.ctx, first))

	second := b.newTask()
	second.Branch = first.Branch
	err := b.st.TaskInsert(b.ctx, second)
	require.ErrorIs(t, err, store.ErrBranchTaken)
	var bt *store.BranchTakenError
	require.True(t, errors.As(err, &bt), "%v", err)
	require.Equal(t, first.ID, bt.Holder)
	require.Contains(t, err.Error(), "branch orchestra/shared is already worked on by task "+first.ID.Short())
	imp := b.importParams()
	imp.Task.Branch = first.Branch
	require.ErrorIs(t, b.st.TaskImport(b.ctx, imp), store.ErrBranchTaken, "an import (a resumed handoff) too")
	_, err = b.st.TaskGet(b.ctx, second.ID)
	require.ErrorIs(t, err, store.ErrNotFound)

	// Once the first has ended, the branch is free; a retry of the first
	// is then refused while the second works on it.
	b.move(t, store.Cancel(first.ID, task.StateQueued, 0, b.at(time.Second)))
	require.NoError(t, b.st.TaskInsert(b.ctx, second))
	_, err = b.st.TaskTransition(b.ctx, store.Retry(first.ID, task.StateCancelled, 0, b.at(2*time.Second)))
	require.ErrorIs(t, err, store.ErrBranchTaken)
	stored, err := b.st.TaskGet(b.ctx, first.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateCancelled, stored.State, "the refused retry changed nothing")

	// Tasks without a branch are not constrained.
	for range 2 {
		b.insertTask(t)
	}
}
