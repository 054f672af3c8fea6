package coord

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A session whose launch takes longer than a lease length keeps its lease
// until its launch is confirmed, within the harness's launch_timeout: a CLI
// that shows a blank screen until its prompt is ready (opencode on a
// loaded machine took 40 s) makes no visible progress while it starts,
// and lost its lease before it could begin. Here the launch takes almost
// three lease lengths: the lease is renewed at each deadline it reaches
// while launching, and the confirmed session then finishes.
func TestFakeASlowLaunchIsBoundedByItsLaunchTimeoutNotItsLease(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			h := cfg.Harness[fakeHarness]
			h.LaunchTimeout = session.Duration{Duration: 2 * time.Hour}
			cfg.Harness[fakeHarness] = h
		})
		length := b.cfg.Lease.Length.Duration
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		launched := b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)
		time.Sleep(3*length - 2*time.Minute) // blank all along
		a.Confirm()
		require.Equal(t, "brief", string(a.NextInput().Kind))
		a.Work("● Update(calc.go)")
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())

		require.Empty(t, b.ledger(t, id, kindIs(task.EvLeaseExpired)), b.dump())
		var launching []time.Duration
		for _, e := range b.ledger(t, id, kindIs(task.EvLeaseRenewed)) {
			if strings.Contains(e.Text, "launches") {
				launching = append(launching, e.At.Sub(launched.At))
			}
		}
		require.Equal(t, []time.Duration{length, 2 * length}, launching, "renewed at each deadline while it launched:\n%s", b.dump())
		tk := b.taskView(t, id).Task
		require.Equal(t, 1, tk.Attempt)
	})
}
