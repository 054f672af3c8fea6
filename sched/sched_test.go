//go:build linux

package sched

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// slices reads the suggested slice of every thread of this process.
func slices(t *testing.T) map[int]uint64 {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	out := map[int]uint64{}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		require.NoError(t, err)
		a, err := unix.SchedGetAttr(tid, 0)
		if err == unix.ESRCH {
			continue
		}
		require.NoError(t, err)
		out[tid] = a.Runtime
	}
	return out
}

// The slice reaches every thread there is, threads started afterwards and
// a child started afterwards; the CPU share (the nice value) is untouched;
// DefaultSlice takes it back, from the children started next too.
// Not parallel: it changes the whole test process.
func TestShortSliceEveryThreadAndLater(t *testing.T) {
	before, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	require.NoError(t, err)
	require.NoError(t, ShortSlice())
	a, err := unix.SchedGetAttr(0, 0)
	require.NoError(t, err)
	if a.Runtime != Slice {
		// A kernel before Linux 6.12 keeps no slice for ordinary tasks:
		// the request was taken without an error and changed nothing.
		t.Logf("this kernel keeps no slice for ordinary tasks (sched_runtime reads %d): ShortSlice is a no-op here", a.Runtime)
		return
	}
	for tid, s := range slices(t) {
		require.EqualValues(t, Slice, s, "thread %d", tid)
	}
	// Threads the runtime starts now: goroutines that each hold a thread
	// of their own at once need more threads than there were.
	n := len(slices(t)) + 4
	done := make(chan uint64)
	release := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var got uint64
			if a, err := unix.SchedGetAttr(0, 0); err == nil {
				got = a.Runtime
			}
			done <- got
			<-release
		}()
	}
	for range n {
		require.EqualValues(t, Slice, <-done)
	}
	close(release)
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ca, err := unix.SchedGetAttr(cmd.Process.Pid, 0)
	require.NoError(t, err)
	require.EqualValues(t, Slice, ca.Runtime, "a child started afterwards")
	after, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	require.NoError(t, err)
	require.Equal(t, before, after, "the nice value must not change")

	require.NoError(t, DefaultSlice())
	for tid, s := range slices(t) {
		require.NotEqualValues(t, Slice, s, "thread %d kept the short slice", tid)
	}
	plain := exec.Command("sleep", "30")
	require.NoError(t, plain.Start())
	t.Cleanup(func() { _ = plain.Process.Kill(); _ = plain.Wait() })
	pa, err := unix.SchedGetAttr(plain.Process.Pid, 0)
	require.NoError(t, err)
	require.NotEqualValues(t, Slice, pa.Runtime, "a child started after DefaultSlice")
}
