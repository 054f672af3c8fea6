package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A session's CPU time is its whole tree's: a grandchild that keeps a core
// busy in a session of its own (setsid) counts, and a tree at rest adds
// (almost) nothing.
func TestCPUCountsTheWholeTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := Spec{Name: "busy", Argv: []string{"sh", "-c",
		`printf 'READY\n'; setsid sh -c 'while [ ! -e stop ]; do :; done; : > stopped' & exec sleep 600`},
		Env: []string{"PATH"}, Delivery: DeliveryType, Submit: `\r`, Ready: "READY"}
	s, err := Start(Params{Spec: spec, Dir: dir, Cols: 40, Rows: 5, Environ: []string{"PATH=" + os.Getenv("PATH")},
		TaskID: "Tcpu", SessionID: "Scpu"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop(time.Second) })
	first, ok := s.CPU()
	require.True(t, ok)
	require.Eventually(t, func() bool {
		d, ok := s.CPU()
		return ok && d >= first+300*time.Millisecond
	}, time.Minute, 20*time.Millisecond, "the busy grandchild's CPU time never showed (%s)", TreeMechanism())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600))
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, "stopped"))
		return err == nil
	}, time.Minute, 10*time.Millisecond)
	rest, _ := s.CPU()
	again, _ := s.CPU()
	require.Less(t, again-rest, 100*time.Millisecond, "a tree at rest uses (almost) nothing")
}

// A stat line's command name may hold spaces and parentheses.
func TestParseStatTakesTheFieldsAfterTheName(t *testing.T) {
	t.Parallel()
	st, ok := parseStat([]byte("4242 (a (b) c) S 7 4242 4200 0 -1 4194560 1 0 0 0 150 25 3 2 20 0 1 0 1 1 1"))
	require.True(t, ok)
	require.Equal(t, procStat{pid: 4242, ppid: 7, sid: 4200, ticks: 150 + 25 + 3 + 2, self: 150 + 25, start: 1}, st)
}

// An agent CLI's own CPU time is not its agent's work: a program that
// keeps a core busy by itself at its prompt (as opencode's terminal UI
// does while it idles or waits on its model behind a spinner) adds
// nothing to the session's CPU time, while a process it starts once its
// launch was confirmed (a build, a test run) counts whole. Before the
// CLI's own processes were left out, the program's busy loop alone made
// the figure rise with the wall clock and a stalled opencode renewed its
// lease to the cap.
func TestCPULeavesOutTheCLIsOwnTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The program spins at its prompt; once "go" exists it also starts
	// a busy child, and spins on.
	spec := Spec{Name: "spinner", Argv: []string{"sh", "-c",
		`printf 'READY\n'; while [ ! -e go ]; do :; done; sh -c 'while [ ! -e stop ]; do :; done' & while :; do :; done`},
		Env: []string{"PATH"}, Delivery: DeliveryType, Submit: `\r`, Ready: "READY"}
	s, err := Start(Params{Spec: spec, Dir: dir, Cols: 40, Rows: 5, Environ: []string{"PATH=" + os.Getenv("PATH")},
		TaskID: "Town", SessionID: "Sown"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop(time.Second) })
	require.NoError(t, s.WaitReady(t.Context()))
	leader := s.cmd.Process.Pid
	own := func() time.Duration {
		st, ok := readStat(leader)
		require.True(t, ok)
		return time.Duration(st.self) * (time.Second / clockTicks)
	}
	first, ok := s.CPU()
	require.True(t, ok)
	spun := own()
	require.Eventually(t, func() bool { return own() >= spun+time.Second }, time.Minute, 20*time.Millisecond,
		"the program never spun")
	idle, ok := s.CPU()
	require.True(t, ok)
	require.Less(t, idle-first, 200*time.Millisecond, "a second of the CLI's own spinning counted as work")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o600))
	require.Eventually(t, func() bool {
		d, ok := s.CPU()
		return ok && d >= idle+time.Second
	}, time.Minute, 20*time.Millisecond, "the busy child's CPU time never showed (%s)", TreeMechanism())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600))
}
