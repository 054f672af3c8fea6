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
	require.Equal(t, procStat{pid: 4242, ppid: 7, sid: 4200, ticks: 150 + 25 + 3 + 2}, st)
}
