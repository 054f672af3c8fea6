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

var claimCases = []testCase{
	{"LeaseClaimTakesTheFirstQueuedCandidate", testLeaseClaimFirst},
	{"LeaseClaimNoneQueued", testLeaseClaimNone},
	{"LeaseClaimEachTaskOnce", testLeaseClaimOnce},
}

// claim claims the first claimable of ids for holder.
func (b *bundle) claim(holder string, ids []task.ID, events func(task.Task) []task.Event) (task.Task, lease.Lease, error) {
	res, err := b.st.LeaseClaim(b.ctx, store.Claim(ids, holder, b.at(time.Second), b.at(time.Minute), events))
	return res.Before, res.Lease, err
}

func testLeaseClaimFirst(t *testing.T, b *bundle) {
	leased, second, first := b.insertTask(t), b.insertTask(t), b.insertTask(t)
	b.grant(t, leased.ID, task.StateQueued, 0)
	var seen task.Task
	var ev task.Event
	got, l, err := b.claim("engine-a", []task.ID{leased.ID, first.ID, second.ID}, func(tk task.Task) []task.Event {
		seen = tk
		ev = b.event(tk.ID, task.EvTaskLeased)
		return []task.Event{ev}
	})
	require.NoError(t, err)
	require.Equal(t, first.ID, got.ID, "the first candidate still queued, in the order given, not the oldest")
	require.Equal(t, first, got, "the task as stored before the grant")
	require.Equal(t, got, seen, "Events sees the same task")
	require.Equal(t, lease.Lease{
		TaskID: first.ID, Holder: "engine-a", Token: 1, GrantedAt: b.at(time.Second), Deadline: b.at(time.Minute),
		Baseline: lease.Progress{At: b.at(time.Second)}, LastProgressAt: b.at(time.Second),
	}, l)
	stored, err := b.st.TaskGet(b.ctx, first.ID)
	require.NoError(t, err)
	want := first
	want.State, want.Attempt, want.Reason, want.UpdatedAt = task.StateLeased, first.Attempt+1, "", b.at(time.Second)
	require.Equal(t, want, stored, "leased, its attempt counted, in the claim's one transaction")
	gotLease, err := b.st.LeaseGet(b.ctx, first.ID)
	require.NoError(t, err)
	require.Equal(t, l, gotLease, "the lease names its holder")
	b.requireEvents(t, first.ID, ev)
	require.Empty(t, b.events(t, second.ID))
}

func testLeaseClaimNone(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	b.grant(t, tk.ID, task.StateQueued, 0)
	called := false
	_, _, err := b.claim("engine-a", []task.ID{tk.ID, "01NOSUCHTASK0000000000000"}, func(task.Task) []task.Event {
		called = true
		return nil
	})
	require.ErrorIs(t, err, store.ErrNotFound)
	require.False(t, called)
	_, _, err = b.claim("engine-a", nil, nil)
	require.ErrorIs(t, err, store.ErrNotFound)
	token, err := b.st.TaskToken(b.ctx, tk.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, token, "a refused claim changes nothing")
}

// Four claimers offer the same twenty tasks in the same order at once, as
// engines with the same view do: every task is claimed exactly once.
func testLeaseClaimOnce(t *testing.T, b *bundle) {
	var ids []task.ID
	for range 20 {
		ids = append(ids, b.insertTask(t).ID)
	}
	var (
		mu  sync.Mutex
		got = map[task.ID]string{}
		wg  sync.WaitGroup
	)
	for _, holder := range []string{"engine-a", "engine-b", "engine-c", "engine-d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				tk, l, err := b.claim(holder, ids, nil)
				if errors.Is(err, store.ErrNotFound) {
					return
				}
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				if prev, ok := got[tk.ID]; ok {
					t.Errorf("task %s claimed by %s and again by %s", tk.ID, prev, holder)
				}
				got[tk.ID] = holder
				mu.Unlock()
				if l.Token != 1 || l.Holder != holder {
					t.Errorf("task %s: lease %+v", tk.ID, l)
				}
			}
		}()
	}
	wg.Wait()
	require.Len(t, got, len(ids))
}

// assertNoError reports err from a goroutine, where require cannot stop
// the test.
func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Errorf("claim: %v", err)
		return false
	}
	return true
}
