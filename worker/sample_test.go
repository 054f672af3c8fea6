package worker

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A still agent's worktree fingerprint backs off, four times as far each
// time up to the cap;
// a changed screen or worktree brings it back to every WorktreeEvery.
func TestNextWorktreeWait(t *testing.T) {
	t.Parallel()
	const every = 5 * time.Second
	wait := every
	var seen []time.Duration
	for range 4 {
		wait = nextWorktreeWait(wait, every, false, true, false)
		seen = append(seen, wait)
	}
	require.Equal(t, []time.Duration{20 * time.Second, time.Minute, time.Minute, time.Minute}, seen)
	require.Equal(t, time.Minute, nextWorktreeWait(wait, every, false, false, false), "no fingerprint taken, nothing seen: the wait stands")
	require.Equal(t, every, nextWorktreeWait(wait, every, true, false, false), "the screen changed")
	require.Equal(t, every, nextWorktreeWait(wait, every, false, true, true), "the worktree changed")
}

// The artifacts are counted again when the state directory changes, not
// on every sample: an artifact the agent writes is counted all the same.
func TestSampleCountsAnArtifactWrittenLater(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reports := make(chan Report, 16)
	gone := make(chan struct{})
	defer close(gone)
	r, err := Start(context.Background(), Params{
		TaskID: "T1", SessionID: "S1", Phase: task.PhasePlan,
		Spec: session.Spec{
			Name: "idle", Argv: []string{"/bin/sh", "-c", "printf 'idle> '; exec sleep 600"}, Env: []string{"PATH"},
			Delivery: session.DeliveryType, Ready: "idle>", Submit: `\r`,
			Quiet: session.Duration{Duration: 50 * time.Millisecond}, LaunchTimeout: session.Duration{Duration: time.Minute},
		},
		Dir: dir, Cols: 40, Rows: 5, Environ: []string{"PATH=" + os.Getenv("PATH")},
		SampleEvery: 10 * time.Millisecond, Settle: 20 * time.Millisecond, Reports: reports, Gone: gone,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Stop(0) })
	require.Zero(t, r.Sample().Artifacts)
	state := filepath.Join(dir, task.StateDir)
	require.NoError(t, os.WriteFile(filepath.Join(state, "research.json"), []byte("{}"), 0o600))
	require.Eventually(t, func() bool { return r.Sample().Artifacts == 1 }, 30*time.Second, 5*time.Millisecond,
		"the artifact written after the start is never counted")
	require.NoError(t, os.WriteFile(filepath.Join(state, "plan.json"), []byte("{}"), 0o600))
	require.Eventually(t, func() bool { return r.Sample().Artifacts == 2 }, 30*time.Second, 5*time.Millisecond,
		"the second artifact is never counted")
}
