package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// inotifyInstances counts this process's inotify file descriptors.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// 200 concurrent sessions stay within one inotify instance (a user has 128
// by default: one per session failed the 128th launch), and each still
// hears about its own state directory: a sentinel written in one of them
// is refused for that session (no artifact), and for no other.
func TestTwoHundredSessionsShareOneInotifyInstance(t *testing.T) {
	const n = 200
	spec := session.Spec{
		Name: "idle", Argv: []string{"/bin/sh", "-c", "printf 'idle> '; exec sleep 600"}, Env: []string{"PATH"},
		Delivery: session.DeliveryType, Ready: "idle>", Submit: `\r`,
		Quiet: session.Duration{Duration: 50 * time.Millisecond}, LaunchTimeout: session.Duration{Duration: time.Minute},
	}
	reports := make(chan Report, 16*n)
	gone := make(chan struct{})
	defer close(gone)
	runs := make([]*Run, n)
	dirs := make([]string, n)
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, r := range runs {
			if r != nil {
				wg.Go(func() { _ = r.Stop(0) })
			}
		}
		wg.Wait()
	})
	for i := range n {
		dirs[i] = t.TempDir()
		r, err := Start(context.Background(), Params{
			TaskID: task.ID(fmt.Sprintf("T%03d", i)), SessionID: fmt.Sprintf("S%03d", i), Phase: task.PhasePlan,
			Spec: spec, Dir: dirs[i], Cols: 40, Rows: 5, Environ: []string{"PATH=" + os.Getenv("PATH")},
			SampleEvery: time.Minute, Settle: 20 * time.Millisecond, Reports: reports, Gone: gone,
		})
		require.NoError(t, err, "session %d", i)
		runs[i] = r
	}
	require.Equal(t, 1, inotifyInstances(t), "200 sessions, one inotify instance")

	const pick = 137
	require.NoError(t, os.WriteFile(filepath.Join(dirs[pick], filepath.FromSlash(task.SentinelPath)), nil, 0o600))
	deadline := time.After(time.Minute)
	for {
		select {
		case rep := <-reports:
			if rep.Kind != Refused {
				continue
			}
			require.Equal(t, task.ID(fmt.Sprintf("T%03d", pick)), rep.TaskID, "another session heard the sentinel")
			require.Equal(t, task.ReasonArtifactMissing, rep.Refusal.Reason)
			return
		case <-deadline:
			t.Fatal("the session never heard its sentinel")
		}
	}
}
