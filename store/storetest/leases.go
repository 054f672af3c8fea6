package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var leaseCases = []testCase{
	{"LeaseGrantAssignsNextToken", testLeaseGrant},
	{"LeaseGrantGuardedByState", testLeaseGrantWrongState},
	{"LeaseGrantMissingTask", testLeaseGrantMissing},
	{"LeaseGetNone", testLeaseGetNone},
	{"LeaseUpdateFencedByToken", testLeaseUpdate},
	{"LeaseDeleteFencedByToken", testLeaseDelete},
	{"LeaseList", testLeaseList},
}

// grant leases a queued (or expect-state) task to holder at now+after.
func (b *bundle) grant(t *testing.T, taskID task.ID, expect task.State, after time.Duration, events ...task.Event) lease.Lease {
	t.Helper()
	l, err := b.st.LeaseGrant(b.ctx, store.LeaseGrantParams{
		TaskID: taskID, Holder: "slot-1@host", ExpectState: expect,
		GrantedAt: b.at(after), Deadline: b.at(after + time.Minute), Baseline: b.progress(after), Events: events,
	})
	require.NoError(t, err)
	return l
}

// requeue moves a leased task back to queued, as the coordinator does when a
// lease expires.
func (b *bundle) requeue(t *testing.T, taskID task.ID) {
	t.Helper()
	tk, err := b.st.TaskGet(b.ctx, taskID)
	require.NoError(t, err)
	tk.State = task.StateQueued
	require.NoError(t, b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{Task: tk, ExpectState: task.StateLeased}))
}

func testLeaseGrant(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	ev := b.event(tk.ID, task.EvTaskLeased)
	l := b.grant(t, tk.ID, task.StateQueued, time.Second, ev)
	require.Equal(t, lease.Lease{
		TaskID: tk.ID, Holder: "slot-1@host", Token: 1, GrantedAt: b.at(time.Second), Deadline: b.at(time.Second + time.Minute),
		Baseline: b.progress(time.Second), LastProgressAt: b.at(time.Second),
	}, l, "the first token is 1 and progress is counted from the grant")

	got, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, l, got)
	stored, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateLeased, stored.State, "the grant moves the task in the same write")
	token, err := b.st.TaskToken(b.ctx, tk.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, token)
	b.requireEvents(t, tk.ID, ev)

	// Each later grant is the previous token plus one, also after the lease
	// row was deleted.
	b.requeue(t, tk.ID)
	l2 := b.grant(t, tk.ID, task.StateQueued, time.Hour)
	require.EqualValues(t, 2, l2.Token)
	require.NoError(t, b.st.LeaseDelete(b.ctx, tk.ID, l2.Token))
	b.requeue(t, tk.ID)
	l3 := b.grant(t, tk.ID, task.StateQueued, 2*time.Hour)
	require.EqualValues(t, 3, l3.Token)

	// Tokens are per task.
	other := b.insertTask(t)
	require.EqualValues(t, 1, b.grant(t, other.ID, task.StateQueued, 0).Token)
}

func testLeaseGrantWrongState(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	l := b.grant(t, tk.ID, task.StateQueued, 0)
	_, err := b.st.LeaseGrant(b.ctx, store.LeaseGrantParams{
		TaskID: tk.ID, Holder: "slot-2", ExpectState: task.StateQueued, GrantedAt: b.at(time.Second),
		Deadline: b.at(time.Minute), Events: []task.Event{b.event(tk.ID, task.EvTaskLeased)},
	})
	require.ErrorIs(t, err, store.ErrConflict)

	got, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, l, got, "the refused grant left the lease alone")
	token, err := b.st.TaskToken(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, l.Token, token, "the refused grant used no token")
	b.requireEvents(t, tk.ID)
}

func testLeaseGrantMissing(t *testing.T, b *bundle) {
	_, err := b.st.LeaseGrant(b.ctx, store.LeaseGrantParams{TaskID: "nope", ExpectState: task.StateQueued, GrantedAt: b.now})
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testLeaseGetNone(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	_, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.st.LeaseGet(b.ctx, "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testLeaseUpdate(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	l := b.grant(t, tk.ID, task.StateQueued, 0)
	renewed := l
	renewed.Deadline, renewed.Renewals = b.at(5*time.Minute), 1
	renewed.Baseline, renewed.LastProgressAt = b.progress(time.Minute), b.at(time.Minute)
	renewed.LastDecision, renewed.LastReason = "renew", task.Reason("progress")
	ev := b.event(tk.ID, task.EvLeaseRenewed)
	require.NoError(t, b.st.LeaseUpdate(b.ctx, store.LeaseUpdateParams{Lease: renewed, Events: []task.Event{ev}}))
	got, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, renewed, got)

	// After a requeue and a new grant, the first holder's renewal is stale.
	b.requeue(t, tk.ID)
	l2 := b.grant(t, tk.ID, task.StateQueued, time.Hour)
	late := renewed
	late.Deadline, late.Renewals = b.at(10*time.Hour), 9
	err = b.st.LeaseUpdate(b.ctx, store.LeaseUpdateParams{Lease: late, Events: []task.Event{b.event(tk.ID, task.EvLeaseRenewed)}})
	require.ErrorIs(t, err, store.ErrStaleToken)
	got, err = b.st.LeaseGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, l2, got, "the stale renewal wrote nothing")
	b.requireEvents(t, tk.ID, ev)
}

func testLeaseDelete(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	l := b.grant(t, tk.ID, task.StateQueued, 0)
	require.ErrorIs(t, b.st.LeaseDelete(b.ctx, tk.ID, l.Token+1), store.ErrStaleToken)
	require.ErrorIs(t, b.st.LeaseDelete(b.ctx, tk.ID, l.Token-1), store.ErrStaleToken)
	got, err := b.st.LeaseGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, l, got)

	require.NoError(t, b.st.LeaseDelete(b.ctx, tk.ID, l.Token))
	_, err = b.st.LeaseGet(b.ctx, tk.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, b.st.LeaseDelete(b.ctx, tk.ID, l.Token), store.ErrNotFound, "nothing left to delete")
	require.ErrorIs(t, b.st.LeaseUpdate(b.ctx, store.LeaseUpdateParams{Lease: l}), store.ErrNotFound, "a deleted lease is not renewed")
	_, err = b.st.LeaseGet(b.ctx, tk.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	token, err := b.st.TaskToken(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, l.Token, token, "the task keeps its token after the lease is gone")
}

func testLeaseList(t *testing.T, b *bundle) {
	none, err := b.st.LeaseList(b.ctx)
	require.NoError(t, err)
	require.Empty(t, none)

	t1, t2, t3 := b.insertTask(t), b.insertTask(t), b.insertTask(t)
	l1 := b.grant(t, t1.ID, task.StateQueued, 0)
	l2 := b.grant(t, t2.ID, task.StateQueued, time.Second)
	l3 := b.grant(t, t3.ID, task.StateQueued, 2*time.Second)
	require.NoError(t, b.st.LeaseDelete(b.ctx, t2.ID, l2.Token))

	got, err := b.st.LeaseList(b.ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []lease.Lease{l1, l3}, got)
}
