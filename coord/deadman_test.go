package coord

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker/workertest"
)

// After each heartbeat that landed, the loop trusts each live session's
// host (its dead-man switch) until the end of the engine's own trust
// window: once per beat however often the loop runs, for what is left of
// the window of a beat that was slow to land, never while stepped down,
// and after a stand-up only once the session has been thawed.
func TestFakeTrustFollowsEachBeatAndNeverWhileSteppedDown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupShared(t)
		w := b.c.sd.trustWindow()
		require.Equal(t, 20*time.Second, w)
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		b.barrier(t)
		require.Empty(t, a.Trusts(), "trusted before any heartbeat landed")

		beat := time.Now()
		b.c.NoteBeat(beat, nil)
		b.barrier(t)
		require.Equal(t, []workertest.Trusted{{Until: beat.Add(w)}}, a.Trusts())
		// The loop runs every second and on every event: one trust per beat.
		time.Sleep(5 * time.Second)
		b.barrier(t)
		require.Len(t, a.Trusts(), 1, "trusted again without a new beat")

		// A beat that took 2 s to land: what is left of its window.
		sent := time.Now()
		time.Sleep(2 * time.Second)
		b.c.NoteBeat(sent, nil)
		b.barrier(t)
		got := a.Trusts()
		require.Len(t, got, 2)
		require.Equal(t, sent.Add(w), got[1].Until)
		require.Equal(t, w-2*time.Second, time.Until(got[1].Until))

		// The beats fail: no trust, and the engine steps down.
		b.c.NoteBeat(time.Now(), context.DeadlineExceeded)
		b.waitEvent(t, func(e task.Event) bool {
			return e.Reason == task.ReasonStoreFailed && strings.Contains(e.Text, "stepped down")
		})
		require.True(t, a.Frozen())
		time.Sleep(time.Minute)
		b.barrier(t)
		require.Len(t, a.Trusts(), 2, "trusted while stepped down")

		// A beat lands: the stand-up thaws the session, then it is trusted.
		again := time.Now()
		b.c.NoteBeat(again, nil)
		b.waitEvent(t, kindIs(task.EvStoreRecovered))
		b.barrier(t)
		got = a.Trusts()
		require.Len(t, got, 3)
		require.Equal(t, workertest.Trusted{Until: again.Add(w)}, got[2], "trusted before the stand-up thawed it")
	})
}

// A session launched between two beats is trusted at its launch, for what
// is left of the last beat's window: an engine stopped before its next
// beat (its hosts running on) must not leave a new agent that no trust ever
// armed, which its host would never freeze (a CI run killed the engine
// just after a launch, and the host never froze its agent).
func TestFakeASessionLaunchedBetweenBeatsIsTrustedAtItsLaunch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupShared(t)
		w := b.c.sd.trustWindow()
		beat := time.Now()
		b.c.NoteBeat(beat, nil)
		b.barrier(t)
		time.Sleep(3 * time.Second)
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		b.barrier(t)
		require.Equal(t, []workertest.Trusted{{Until: beat.Add(w)}}, a.Trusts(), "not trusted at its launch")
	})
}

// After a lapse (the engine stopped past the TTL), the first beat makes the
// engine stand up before any trust: the session whose task another engine
// took over meanwhile is stopped and never trusted again (a trust would
// thaw it beside the new holder's), the other is thawed, then trusted.
func TestFakeTrustAfterALapseSkipsTheSessionOfATaskTakenOver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFakeWrapped(t, func(cfg *config.Config) {
			h := cfg.Harness[fakeHarness]
			h.Capacity = 2
			cfg.Harness[fakeHarness] = h
		}, func(st store.Store) store.Store { return sharedStore{st} })
		w := b.c.sd.trustWindow()
		b.add(t, task.Pipeline{task.PhaseImplement})
		lost := b.add(t, task.Pipeline{task.PhaseImplement})
		a1, _ := b.launch(t)
		a2, _ := b.launch(t)
		kept, gone := a1, a2
		if gone.Params().TaskID != lost {
			kept, gone = a2, a1
		}
		b.c.NoteBeat(time.Now(), nil)
		b.barrier(t)
		require.Len(t, kept.Trusts(), 1)
		require.Len(t, gone.Trusts(), 1)
		ctx := context.Background()
		l, err := b.st.LeaseGet(ctx, lost)
		require.NoError(t, err)

		b.waitEvent(t, func(e task.Event) bool { return e.Reason == task.ReasonStoreFailed })
		time.Sleep(time.Minute)
		require.NoError(t, takeOver(ctx, b.st, lost, task.StateRunning, l.Token, liveHolder(t)))

		// The beat after the lapse.
		beat := time.Now()
		b.c.NoteBeat(beat, nil)
		b.waitEvent(t, kindIs(task.EvStoreRecovered))
		<-gone.Done()
		b.barrier(t)
		require.Len(t, gone.Trusts(), 1, "the session of a task taken over was trusted after the lapse")
		got := kept.Trusts()
		require.Len(t, got, 2)
		require.Equal(t, workertest.Trusted{Until: beat.Add(w)}, got[1], "trusted before the stand-up thawed it")
	})
}
