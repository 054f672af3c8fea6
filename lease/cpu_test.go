package lease

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// CPU time is progress when it is at least WorkShare of one core over the
// time between the samples: a silent build renews, an idle prompt does not.
func TestCPUTimeIsProgressAboveTheWorkShare(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	base := Progress{Screen: "s", At: t0, CPU: 3 * time.Second}
	busy := Progress{Screen: "s", At: t0.Add(time.Minute), CPU: base.CPU + 40*time.Second}
	idle := Progress{Screen: "s", At: t0.Add(time.Minute), CPU: base.CPU + 2*time.Second}
	require.True(t, busy.Advanced(base), "40 s of CPU in a minute is work")
	require.False(t, idle.Advanced(base), "2 s of CPU in a minute is an idle prompt")
	require.False(t, Progress{Screen: "s", At: t0.Add(time.Minute)}.Advanced(base), "unknown CPU time is no progress")
	require.False(t, Progress{Screen: "s", CPU: time.Hour}.Advanced(Progress{Screen: "s", CPU: 0}), "no times, no span: no progress")

	p := Policy{Length: 2 * time.Minute, Window: time.Minute, MaxRenewals: 1}
	l := Grant("T1", "h", 1, t0, p, base)
	d := Decide(l, p, busy, busy.At, busy.At)
	require.Equal(t, ActionRenew, d.Action)
	require.Contains(t, d.Text, "the session's processes used 40s CPU in 1m0s")
	d = Decide(d.Lease, p, Progress{Screen: "s", At: t0.Add(2 * time.Minute), CPU: busy.CPU + time.Minute}, t0.Add(2*time.Minute), t0.Add(2*time.Minute))
	require.Equal(t, ActionRefuse, d.Action, "CPU time renews within the same cap")
	require.Equal(t, task.ReasonRenewalCap, d.Reason)
}
