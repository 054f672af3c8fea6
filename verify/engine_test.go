package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// gateHelperEnv makes this test binary act as an engine running one gate.
const gateHelperEnv = "ORCHESTRA_TEST_GATE_HELPER"

// gateCommandEnv, when set, is the helper gate's command.
const gateCommandEnv = "ORCHESTRA_TEST_GATE_COMMAND"

func TestMain(m *testing.M) {
	if dir := os.Getenv(gateHelperEnv); dir != "" {
		// The "engine": run a gate that writes its pid (into the test's
		// FIFO) and then runs for ever, until this process is killed.
		command := `echo $$ > gate.pid; exec sleep 600`
		if c := os.Getenv(gateCommandEnv); c != "" {
			command = c
		}
		Run(context.Background(), Params{Dir: dir, Task: "T-ENGINE", Command: command})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// readPid reads the pid the gate writes into the FIFO at path: the open
// blocks until the gate has opened its end, so nothing polls.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// A verify gate dies with the engine that started it: the engine killed
// with SIGKILL takes its gate along, instead of leaving it to run beside
// the next engine's gate.
func TestGateDiesWithItsEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "gate.pid"), 0o600))
	engine := exec.Command(self, "-test.run=^$")
	engine.Env = append(os.Environ(), gateHelperEnv+"="+dir)
	require.NoError(t, engine.Start())
	gate := readPid(t, filepath.Join(dir, "gate.pid"))
	fd, err := pidfd(gate)
	require.NoError(t, err)
	defer syscall.Close(fd)

	require.NoError(t, engine.Process.Signal(syscall.SIGKILL))
	_ = engine.Wait()
	require.True(t, waitExit(fd, 10*time.Second), "gate %d outlived its engine", gate)
}

// A gate of the task left running (by an engine that died before it could
// take it along) is stopped before the next gate of that task starts; a
// gate of another task is not touched.
func TestAnEarlierGateOfTheTaskIsStoppedFirst(t *testing.T) {
	t.Parallel()
	stale := exec.Command("sleep", "600")
	stale.Env = append(os.Environ(), session.TaskEnv+"="+GateMark("T-STALE"))
	other := exec.Command("sleep", "600")
	other.Env = append(os.Environ(), session.TaskEnv+"="+GateMark("T-OTHER"))
	require.NoError(t, stale.Start())
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	exited := make(chan struct{})
	go func() { _ = stale.Wait(); close(exited) }()

	v := Run(context.Background(), Params{Dir: t.TempDir(), Task: "T-STALE", Command: "true"})
	require.Equal(t, StatusOK, v.Status, fmt.Sprint(v))
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the earlier gate still runs")
	}
	require.NoError(t, syscall.Kill(other.Process.Pid, 0), "another task's gate was touched")
}

// Two engines of a fleet on one machine may both have gated task T (one
// took it over from the other): a gate starting under one engine's owner
// mark stops that engine's earlier gate of T and leaves the other
// engine's gate running.
func TestAnotherEnginesGateOfTheTaskIsLeftAlone(t *testing.T) {
	t.Parallel()
	own, theirs := session.OwnerMark(filepath.Join(t.TempDir(), "a")), session.OwnerMark(filepath.Join(t.TempDir(), "b"))
	start := func(owner string) (*exec.Cmd, chan struct{}) {
		cmd := exec.Command("sleep", "600")
		cmd.Env = append(os.Environ(), session.TaskEnv+"="+GateMark("T-OWNED"), session.OwnerEnv+"="+owner)
		require.NoError(t, cmd.Start())
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
		return cmd, done
	}
	_, stale := start(own)
	other, otherDone := start(theirs)

	v := Run(context.Background(), Params{Dir: t.TempDir(), Task: "T-OWNED", Owner: own, Command: `test "$ORCHESTRA_OWNER" = ` + own})
	require.Equal(t, StatusOK, v.Status, "the gate carries its owner mark: %v", v)
	select {
	case <-stale:
	case <-time.After(10 * time.Second):
		t.Fatal("this engine's earlier gate still runs")
	}
	select {
	case <-otherDone:
		t.Fatal("the other engine's gate was stopped")
	default:
	}
	require.NoError(t, syscall.Kill(other.Process.Pid, 0), "the other engine's gate runs")
}
