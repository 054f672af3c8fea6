package coord

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// sharedStore is a store the coordinator takes for one other engines share
// (as PostgreSQL), so it judges heartbeats and steps down.
type sharedStore struct{ store.Store }

func (sharedStore) Shared() bool { return true }

func setupShared(t *testing.T) *fakeBundle {
	t.Helper()
	return setupFakeWrapped(t, nil, func(st store.Store) store.Store { return sharedStore{st} })
}

// liveHolder is a holder name that is judged alive on this host (init's
// pid and start time), the engine that takes a task over in these tests.
func liveHolder(t *testing.T) string {
	t.Helper()
	start, err := procStart(1)
	require.NoError(t, err)
	return fmt.Sprintf("engine:1:%d:other", start)
}

// An engine whose heartbeat stops landing trusts itself until the start of
// its last good beat plus the TTL minus the margin (20 s of a 30 s TTL):
// it then places nothing and freezes its agent, before the TTL at which
// another engine may take the task over, and says so; once a beat lands
// again, the agent goes on where it was and placement resumes.
func TestFakeStepDownFreezesBeforeTheTTLAndStandsUp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupShared(t)
		require.Equal(t, 30*time.Second, b.c.fleet.ttl)
		first := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		beat := time.Now()
		b.c.NoteBeat(beat, nil)

		// The beats fail from here on. Within the window nothing changes.
		b.c.NoteBeat(time.Now(), context.DeadlineExceeded)
		time.Sleep(19 * time.Second)
		b.barrier(t)
		require.False(t, a.Frozen(), "frozen inside the trust window")
		require.Empty(t, b.c.Snapshot().SteppedDown)

		ev := b.waitEvent(t, func(e task.Event) bool {
			return e.Reason == task.ReasonStoreFailed && strings.Contains(e.Text, "stepped down")
		})
		since := time.Since(beat)
		require.Less(t, since, b.c.fleet.ttl, "stepped down only after another engine could take over")
		require.GreaterOrEqual(t, since, 20*time.Second)
		require.True(t, a.Frozen(), "the agent works on past the trust window")
		require.Contains(t, ev.Text, "frozen")
		require.Contains(t, b.c.Snapshot().SteppedDown, "stepped down")

		// Nothing is placed while down, however long.
		second := b.add(t, task.Pipeline{task.PhaseImplement})
		time.Sleep(time.Minute)
		b.barrier(t)
		require.Equal(t, task.StateQueued, b.taskView(t, second).Task.State, "placed while stepped down")
		require.Equal(t, task.StateRunning, b.taskView(t, first).Task.State)

		// The beats land again: the agent goes on, placement resumes.
		stop := beating(b.c)
		defer stop()
		up := b.waitEvent(t, kindIs(task.EvStoreRecovered))
		require.Contains(t, up.Text, "1 frozen sessions go on")
		require.False(t, a.Frozen(), "still frozen after the stand-up")
		require.Empty(t, a.Stops(), "the agent of a lease still held was stopped")
		require.Empty(t, b.c.Snapshot().SteppedDown)
		require.Equal(t, task.StateRunning, b.taskView(t, first).Task.State)
		a.Finish([]byte("done\n"))
		b.waitEvent(t, func(e task.Event) bool { return e.TaskID == first && e.Kind == task.EvTaskAwaiting })
		b.launch(t) // the second task, once the slot is free
	})
}

// An engine that was stopped as a whole (SIGSTOP) past the TTL, whose task
// another engine took over meanwhile: its first beat after the lapse makes
// it step down and stand up before anything else, and the frozen agent is
// stopped without ever running again; nothing of the task is written under
// the old token.
func TestFakeLapsedEngineStopsTheAgentOfATaskTakenOver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupShared(t)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		b.c.NoteBeat(time.Now(), nil)
		ctx := context.Background()
		l, err := b.st.LeaseGet(ctx, id)
		require.NoError(t, err)
		// The watchdog froze the agent at the end of the trust window.
		b.waitEvent(t, func(e task.Event) bool { return e.Reason == task.ReasonStoreFailed })
		require.True(t, a.Frozen())

		// Another engine takes the task over after the TTL and runs it.
		time.Sleep(time.Minute)
		orphaned := time.Now()
		_, err = b.st.TaskTransition(ctx, store.Orphan(id, task.StateRunning, l.Token, orphaned))
		require.NoError(t, err)
		other, err := b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: id, Holder: liveHolder(t),
			ExpectState: task.StateQueued, GrantedAt: time.Now(), Deadline: time.Now().Add(time.Hour)})
		require.NoError(t, err)

		b.c.NoteBeat(time.Now(), nil)
		b.waitEvent(t, refusalOf(task.ReasonStaleLeaseToken))
		<-a.Done()
		require.True(t, a.Frozen(), "the agent ran again beside the new holder's before it was stopped")
		b.waitEvent(t, kindIs(task.EvStoreRecovered))
		b.barrier(t)

		got, err := b.st.LeaseGet(ctx, id)
		require.NoError(t, err)
		require.Equal(t, other, got, "the new holder's lease was touched")
		tk, err := b.st.TaskGet(ctx, id)
		require.NoError(t, err)
		require.Equal(t, task.StateLeased, tk.State, "the task was moved under the old token")
		ss, err := b.st.SessionList(ctx, id)
		require.NoError(t, err)
		require.Len(t, ss, 1)
		// The takeover's requeue ended the session; the old engine's own
		// end, with its continuity, came after the new grant.
		require.Equal(t, store.SessionKilled, ss[0].Status, "the takeover's requeue left the session live")
		require.True(t, ss[0].EndedAt.Equal(orphaned.UTC()), "ended at %s, not at the takeover", ss[0].EndedAt)
		require.Empty(t, ss[0].Continuity, "the old engine wrote its session row under a stale token")
	})
}

// beating records a heartbeat that lands every 10 s, as the engine's does,
// until the returned func is called.
func beating(c *Coordinator) (stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(10 * time.Second)
		defer tk.Stop()
		for {
			c.NoteBeat(time.Now(), nil)
			select {
			case <-quit:
				return
			case <-tk.C:
			}
		}
	}()
	return func() { close(quit); <-done }
}
