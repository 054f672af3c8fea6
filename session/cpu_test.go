package session

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// An agent CLI's own CPU time is work only while it follows something
// that gave the CLI work: a program that keeps a core busy by itself (as
// opencode's terminal UI does at its prompt, behind its spinner, and while
// it builds a request) counts right after its launch was confirmed, not
// once OwnGrace has passed with a still screen and no input, counts again
// after its screen changed, and a process it starts (a build, a test run)
// counts whole. Before the rule its stalled spinning counted without end
// (the whole tree's time: a stalled opencode renewed its lease to the
// cap); with the CLI's own time always left out (2a1fdae), its first
// second of work after confirmation did not count (opencode building its
// first request on a loaded machine lost its lease).
func TestCPUCountsTheCLIsOwnTimeOnlyWithinItsGrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	clock := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); clock = clock.Add(d) }
	// The program spins at its prompt; it prints SHOWN once "show"
	// exists, and once "go" exists it also starts a busy child, and
	// spins on.
	spec := Spec{Name: "spinner", Argv: []string{"sh", "-c",
		`printf 'READY\n'; while [ ! -e go ]; do if [ -e show ]; then rm show; printf 'SHOWN\n'; fi; done; ` +
			`sh -c 'while [ ! -e stop ]; do :; done' & while :; do :; done`},
		Env: []string{"PATH"}, Delivery: DeliveryType, Submit: `\r`, Ready: "READY"}
	s, err := Start(Params{Spec: spec, Dir: dir, Cols: 40, Rows: 5, Environ: []string{"PATH=" + os.Getenv("PATH")},
		TaskID: "Town", SessionID: "Sown", Now: now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop(time.Second) })
	require.NoError(t, s.WaitReady(t.Context()))
	leader := s.cmd.Process.Pid
	own := func() time.Duration {
		st, ok := readStat(leader)
		require.True(t, ok)
		return time.Duration(st.self) * (time.Second / clockTicks)
	}
	cpu := func() time.Duration {
		d, ok := s.CPU()
		require.True(t, ok)
		return d
	}
	spin := func(why string) {
		spun := own()
		require.Eventually(t, func() bool { return own() >= spun+time.Second }, time.Minute, 20*time.Millisecond,
			"the program never spun (%s)", why)
	}

	first := cpu()
	spin("after confirmation")
	require.Greater(t, cpu()-first, 500*time.Millisecond, "a second of the CLI's own work right after its confirmation did not count")

	advance(OwnGrace + time.Second)
	still := cpu()
	spin("with a still screen")
	idle := cpu()
	require.Less(t, idle-still, 200*time.Millisecond, "a second of the CLI's own spinning on a screen still for OwnGrace counted as work")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "show"), nil, 0o600))
	require.Eventually(t, func() bool { return strings.Contains(s.View().Text(), "SHOWN") }, time.Minute, 20*time.Millisecond)
	shown := cpu()
	spin("after its screen changed")
	require.Greater(t, cpu()-shown, 500*time.Millisecond, "a second of the CLI's own work after its screen changed did not count")

	advance(OwnGrace + time.Second)
	quiet := cpu()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o600))
	require.Eventually(t, func() bool { return cpu() >= quiet+time.Second }, time.Minute, 20*time.Millisecond,
		"the busy child's CPU time never showed (%s)", TreeMechanism())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600))
}

// The CLI's own time counts while its last input or change of screen is
// at most OwnGrace old, and only what it spent meanwhile.
func TestOwnTimeCountsWithinOwnGraceOfInputOrScreen(t *testing.T) {
	t.Parallel()
	var o ownProcs
	at := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	o.active(at)
	require.Equal(t, time.Duration(0), o.uncounted(3*time.Second, "prompt", at), "the start's own time counted")
	require.Equal(t, time.Duration(0), o.uncounted(5*time.Second, "prompt", at.Add(OwnGrace)), "work within the grace counted")
	require.Equal(t, 4*time.Second, o.uncounted(9*time.Second, "prompt", at.Add(OwnGrace+time.Second)), "spinning past the grace counted")
	require.Equal(t, 4*time.Second, o.uncounted(9*time.Second, "prompt", at.Add(2*OwnGrace)))
	require.Equal(t, 4*time.Second, o.uncounted(10*time.Second, "reply", at.Add(2*OwnGrace+time.Second)), "work on a changed screen did not count")
	require.Equal(t, 6*time.Second, o.uncounted(12*time.Second, "reply", at.Add(4*OwnGrace)), "spinning before the input counted")
	o.active(at.Add(5 * OwnGrace))
	require.Equal(t, 6*time.Second, o.uncounted(13*time.Second, "reply", at.Add(5*OwnGrace+time.Second)), "work after an input did not count")
}

// A harness's own_grace replaces OwnGrace: a session started from a spec
// with own_grace 5s leaves its CLI's own time out 5 s after its last input
// or change of screen, not a minute after (a demo's short lease would
// otherwise be renewed for a minute by a stalled CLI's spinner).
func TestOwnGraceOfTheHarnessReplacesOwnGrace(t *testing.T) {
	t.Parallel()
	spec := Spec{Name: "idle", Argv: []string{"sh", "-c", "printf 'READY\\n'; exec sleep 60"},
		Env: []string{"PATH"}, Delivery: DeliveryType, Submit: `\r`, Ready: "READY", OwnGrace: Duration{5 * time.Second}}
	s, err := Start(Params{Spec: spec, Dir: t.TempDir(), Cols: 40, Rows: 5, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop(time.Second) })
	require.Equal(t, 5*time.Second, s.own.grace)

	o := &s.own
	at := time.Now().Add(time.Hour) // after the launch's own marks
	o.active(at)
	require.Equal(t, time.Duration(0), o.uncounted(0, "prompt", at))
	require.Equal(t, time.Duration(0), o.uncounted(2*time.Second, "prompt", at.Add(5*time.Second)), "work within the harness's grace counted")
	require.Equal(t, 3*time.Second, o.uncounted(5*time.Second, "prompt", at.Add(6*time.Second)), "spinning past the harness's grace counted")

	bad := spec
	bad.OwnGrace = Duration{-time.Second}
	require.ErrorContains(t, bad.Validate(), "own_grace")
}
