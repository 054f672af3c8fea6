package session

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ignoredEnv marks the run of this test binary that a parent started with
// SIGHUP and SIGINT ignored.
const ignoredEnv = "ORCHESTRA_TEST_SIGNALS_IGNORED"

// An engine started by nohup, or as a background job, inherits SIGHUP (and
// SIGINT) ignored; its agents must not. Without the reset, the interactive
// shell below ignores the hangup and waits out Stop's whole grace.
func TestAgentsStartWithHangupAtItsDefaultUnderNohup(t *testing.T) {
	t.Parallel()
	if os.Getenv(ignoredEnv) == "1" {
		t.Skip("the child run is TestStopUnderInheritedIgnoredSignals")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// trap '' ignores both for sh and, through exec, for the test binary.
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `trap '' HUP INT; exec "$0" -test.run='^TestStopUnderInheritedIgnoredSignals$' -test.count=1 -test.v`, exe)
	cmd.Env = append(os.Environ(), ignoredEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestStopUnderInheritedIgnoredSignals")
}

// TestStopUnderInheritedIgnoredSignals runs only as the child of the test
// above, in a process that ignores SIGHUP and SIGINT.
func TestStopUnderInheritedIgnoredSignals(t *testing.T) {
	if os.Getenv(ignoredEnv) != "1" {
		t.Skip("runs only as the child of TestAgentsStartWithHangupAtItsDefaultUnderNohup")
	}
	spec := shSpec(`exec /bin/sh -i`, `(?m)[$#] ?$`)
	spec.SetEnv = map[string]string{"PS1": "$ "}
	b := setup(t, spec)
	require.NoError(t, b.s.WaitReady(context.Background()))
	// A minute of grace: the shell must end on the hangup, not the kill
	// that follows the grace.
	require.NoError(t, b.s.Stop(time.Minute))
	require.Equal(t, 128+int(syscall.SIGHUP), b.s.ExitCode())
}
