package coord

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A scripted agent whose build runs silently for five minutes on one core
// (its screen never changes, its tree's CPU time rises a second a second)
// with stuck.after = 1m and two-minute leases is never flagged stuck and
// keeps its lease: it is renewed on its CPU time alone, within the same
// window and cap as on a change of screen, and the list says why it is not
// stuck. Once the build ends and nothing else happens, it is flagged stuck
// a minute after the tree last worked, and loses its lease one lease
// length after its last renewal.
func TestFakeSilentBuildIsWorkNotAStall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Stuck.After.Duration = time.Minute
			cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = 2*time.Minute, time.Minute
		})
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		a.EchoInputs()
		b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)
		a.Confirm()
		require.Equal(t, "brief", string(a.NextInput().Kind))
		briefed := b.waitOnce(t, task.EvBriefDelivered, a.Params().SessionID)
		a.Work("● Bash(go test ./...)")

		const build = 5 * time.Minute
		const step = 5 * time.Second
		var working string // what the list says two minutes into the build
		go func() {
			for elapsed := step; elapsed <= build; elapsed += step {
				time.Sleep(step)
				if elapsed == 2*time.Minute+step {
					working = b.taskView(t, id).Working
				}
				a.BurnCPU(step)
			}
		}()
		// Read what the coordinator publishes until the build is over.
		guard := time.NewTimer(build + time.Second)
		b.running.next(t, guard.C, func(Notice) bool { return false })
		require.Equal(t, "working: 60 s CPU in the last minute", working, b.dump())
		renewals := 0
		for _, e := range b.events {
			require.NotEqual(t, task.ReasonStuck, e.Reason, "a silent build is not a stall: %s", b.dump())
			require.NotEqual(t, task.EvLeaseExpired, e.Kind, b.dump())
			if e.Kind == task.EvLeaseRenewed {
				renewals++
				require.Contains(t, e.Text, "CPU", "renewed on the tree's CPU time")
			}
		}
		// Windows open at 1, 2, 3, 4 minutes after each renewal's start:
		// every minute of the build renews the lease.
		require.GreaterOrEqual(t, renewals, 4, b.dump())
		require.False(t, b.taskView(t, id).Stuck)
		require.Equal(t, task.StateRunning, b.taskView(t, id).Task.State)

		// The build is over and the agent does nothing more.
		done := briefed.At.Add(build)
		stuck := b.waitEvent(t, refusalOf(task.ReasonStuck))
		require.Equal(t, time.Minute, stuck.At.Sub(done), b.dump())
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		var lastRenewal time.Time // the build's last burn renewed it once more
		for _, e := range b.events {
			if e.Kind == task.EvLeaseRenewed {
				lastRenewal = e.At
			}
		}
		require.Equal(t, 2*time.Minute, expired.At.Sub(lastRenewal), b.dump())
		require.True(t, expired.At.Sub(briefed.At) > build, b.dump())
	})
}

// An agent that prints nothing and does nothing after its brief loses its
// lease one lease length after the brief: the brief's echo in its pane is
// the console's typing, not progress, so no renewal is granted for it.
func TestFakeSilentAgentGetsNoFreeRenewal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		a.EchoInputs()
		b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)
		time.Sleep(3 * time.Second) // the CLI starts
		a.Confirm()
		brief := a.NextInput()
		require.Equal(t, "brief", string(brief.Kind))
		briefed := b.waitOnce(t, task.EvBriefDelivered, a.Params().SessionID)
		require.Contains(t, a.View().Text(), brief.Text, "the brief's echo is on the screen")

		refused := b.waitEvent(t, refusalOf(task.ReasonRenewalNoProgress))
		require.Equal(t, 15*time.Minute, refused.At.Sub(briefed.At), b.dump())
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		require.Equal(t, 20*time.Minute, expired.At.Sub(briefed.At), b.dump())
		require.Contains(t, expired.Text, "after 0 renewal(s)")
		for _, e := range b.events {
			require.NotEqual(t, task.EvLeaseRenewed, e.Kind, "no free renewal: %s", b.dump())
		}
	})
}
