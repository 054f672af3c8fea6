package verify

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// What the gate's shell started (as `go test` starts its test binary)
// dies with a SIGKILLed engine too, within 2 s, not only the shell the
// engine started: the watcher kills the gate's whole process group.
func TestGateGrandchildrenDieWithTheEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "gate.pid"), 0o600))
	engine := exec.Command(self, "-test.run=^$")
	// A long-running test binary under its driver: a grandchild of the
	// engine, with the shell waiting for it.
	engine.Env = append(os.Environ(), gateHelperEnv+"="+dir,
		gateCommandEnv+"="+`sleep 40 & echo $! > gate.pid; wait`)
	require.NoError(t, engine.Start())
	grandchild := readPid(t, filepath.Join(dir, "gate.pid"))
	fd, err := pidfd(grandchild)
	require.NoError(t, err)
	defer syscall.Close(fd)

	require.NoError(t, engine.Process.Signal(syscall.SIGKILL))
	_ = engine.Wait()
	killed := time.Now()
	require.True(t, waitExit(fd, 10*time.Second), "the gate's child %d outlived its engine", grandchild)
	require.Less(t, time.Since(killed), 2*time.Second, "the gate's child outlived its engine by 2 s or more")
}

// A gate that ends by itself leaves no watcher behind.
func TestGateLeavesNoWatcher(t *testing.T) {
	t.Parallel()
	var watcher int
	v := Run(t.Context(), Params{Dir: t.TempDir(), Command: "true", started: func(int) {}})
	require.Equal(t, StatusOK, v.Status)
	d := startDeathWatch()
	require.NotNil(t, d)
	watcher = d.cmd.Process.Pid
	d.watch(1 << 30) // a group that does not exist
	d.stop()
	require.ErrorIs(t, syscall.Kill(watcher, 0), syscall.ESRCH, "the watcher was reaped")
}
