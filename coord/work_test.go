package coord

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The real thing, in short: a scripted agent in a real pty runs a silent
// CPU-bound build (a busy child process, nothing drawn) with stuck.after
// at two seconds and four-second leases. The session's tree is measured
// for real (its cgroup or /proc): the lease is renewed on its CPU time
// again and again while the screen stays still, for several stuck.after,
// and no stuck flag is raised,
// and the list says why; when the build ends (the test's stop file) the
// phase finishes. The five-minute run is BenchmarkSilentBuild.
func TestSilentBuildKeepsItsLeaseOnRealCPUTime(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveBuild, BuildUntil: "stop-build",
			Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, func(cfg *config.Config) {
		// Above the worker's one reading of CPU time a second: the
		// meter needs two before it can say the tree works.
		cfg.Stuck.After.Duration = 2 * time.Second
		cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = 4*time.Second, 3*time.Second
		cfg.Lease.MaxRenewals = 1000
	})
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, time.Minute, kindIs(task.EvBriefDelivered))
	building := b.waitPane(t, id, "Bash(make build)", time.Minute)

	// Six renewals on CPU time alone. A renewal comes at the earliest
	// lease.length - lease.window (1 s) after the one before, so six span
	// at least 5 s: more than twice stuck.after whatever the machine's
	// load (four spanned 3.99 s once in CI).
	for range 6 {
		b.waitEvent(t, time.Minute, func(e task.Event) bool {
			return e.Kind == task.EvLeaseRenewed && strings.Contains(e.Text, "CPU in")
		})
	}
	b.barrier(t)
	tv := b.taskView(t, id)
	require.False(t, tv.Stuck, b.dump())
	still := time.Since(building)
	require.Greater(t, still, 2*b.cfg.Stuck.After.Duration, "the screen was still for several stuck.after")
	v, ok := b.c.Pane(id)
	require.True(t, ok)
	require.NotContains(t, v.Text(), "build ok", "the build still runs")
	for _, e := range b.events {
		require.NotEqual(t, task.ReasonStuck, e.Reason, "a busy tree is not stuck: %s", b.dump())
		require.NotEqual(t, task.EvLeaseExpired, e.Kind, b.dump())
	}
	require.Eventually(t, func() bool {
		return strings.HasSuffix(b.taskView(t, id).Working, "s CPU in the last minute")
	}, time.Minute, 20*time.Millisecond, "the list never said why the silent pane is not stuck")

	wt := filepath.Join(b.root, ".orchestra", "worktrees", string(id))
	require.NoError(t, os.WriteFile(filepath.Join(wt, "stop-build"), nil, 0o600))
	last := b.waitEvent(t, 2*time.Minute, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
}

// BenchmarkSilentBuild is the whole of the real run, once per iteration: a
// scripted agent whose build keeps a core busy for BUILD_SECONDS (300, five
// minutes, unless set) drawing nothing, with stuck.after = 1m and
// two-minute leases renewed in their last minute. It reports the stuck
// flags raised and the leases lost during the build (both must be 0), the
// renewals (each renewal's event, in the log, says how much CPU time the
// session used since the one before). Run it with bench/silent_build.sh.
func BenchmarkSilentBuild(b *testing.B) {
	secs := 300
	if v := os.Getenv("BUILD_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(b, err)
		secs = n
	}
	for b.Loop() {
		bu := setup(b, agent.Script{Phases: map[task.Phase][]agent.Entry{
			task.PhaseImplement: {{Behave: agent.BehaveBuild, BuildSeconds: secs,
				Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
		}}, func(cfg *config.Config) {
			cfg.Stuck.After.Duration = time.Minute
			cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = 2*time.Minute, time.Minute
		})
		bu.addPipeline(b, task.Pipeline{task.PhaseImplement})
		began := time.Now()
		last := bu.waitEvent(b, time.Duration(secs)*time.Second+5*time.Minute, ended)
		stuck, expired, renewals := 0, 0, 0
		for _, e := range bu.events {
			switch {
			case e.Reason == task.ReasonStuck:
				stuck++
			case e.Kind == task.EvLeaseExpired:
				expired++
			case e.Kind == task.EvLeaseRenewed:
				renewals++
			}
		}
		b.Logf("%s after %s:\n%s", last.Kind, time.Since(began).Round(time.Second), bu.dump())
		require.Equal(b, task.EvTaskAwaiting, last.Kind, bu.dump())
		b.ReportMetric(float64(stuck), "stuck-flags")
		b.ReportMetric(float64(expired), "leases-lost")
		b.ReportMetric(float64(renewals), "renewals")
	}
}
