package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireGroupGone checks that nothing in process group pgid still runs.
// Members killed after their parent died may linger as zombies until init
// reaps them (some container inits never do); they run nothing, so they are
// allowed, but kill(-pgid, 0) must say ESRCH whenever no zombie is left.
func requireGroupGone(t *testing.T, pgid int) {
	t.Helper()
	require.Positive(t, pgid)
	require.Zero(t, running(pgid), "a process of the verify command's group is still running")
	if !groupHasZombie(pgid) {
		require.ErrorIs(t, syscall.Kill(-pgid, 0), syscall.ESRCH)
	}
}

func groupHasZombie(pgid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		state, group, ok := procStat(filepath.Join("/proc", e.Name(), "stat"))
		if ok && group == pgid && state == 'Z' {
			return true
		}
	}
	return false
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// fixedClock returns a clock that advances one second per reading.
func fixedClock() func() time.Time {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		at = at.Add(time.Second)
		return at
	}
}

// The gate on a Go module with two tests, one failing, counts tests, not
// packages, shows go test's own text in the tail, and never passes on a
// cached result.
func TestRunGoModuleFailingThenFixed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/calc\n\ngo 1.21\n")
	writeFile(t, filepath.Join(dir, "calc.go"), "package calc\n\n// Add is wrong on purpose.\nfunc Add(a, b int) int { return a - b }\n")
	writeFile(t, filepath.Join(dir, "calc_test.go"), `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestAddZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Fatalf("Add(0, 0) = %d, want 0", got)
	}
}
`)
	env := append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	params := Params{Dir: dir, Command: "go test ./...", Timeout: 2 * time.Minute, Env: env, Now: fixedClock()}

	v := Run(t.Context(), params)
	require.Equal(t, StatusIncomplete, v.Status, v.Tail)
	require.True(t, v.Counted)
	require.Equal(t, 1, v.Failed)
	require.Equal(t, 1, v.ExitCode)
	require.Contains(t, v.Tail, "Add(2, 3) = -1, want 5")
	require.Contains(t, v.Tail, "--- FAIL: TestAdd")
	require.NotContains(t, v.Tail, `"Action"`, "the tail is go test's text, not its JSON")
	require.Equal(t, 1, v.Passed)
	require.Equal(t, "✗ incomplete · tests failing (1 passed, 1 failed)", v.Line())
	require.Equal(t, time.Second, v.Duration)

	writeFile(t, filepath.Join(dir, "calc.go"), "package calc\n\n// Add returns the sum.\nfunc Add(a, b int) int { return a + b }\n")
	params.Command = "go test -v ./..."
	v = Run(t.Context(), params)
	require.Equal(t, StatusOK, v.Status, v.Tail)
	require.Equal(t, 0, v.ExitCode)
	require.Equal(t, "✓ ok · tests green (2 passed)", v.Line())

	// Run again: go test would answer from its cache without -count=1.
	params.Command = "go test ./..."
	v = Run(t.Context(), params)
	require.Equal(t, "✓ ok · tests green (2 passed)", v.Line())
	require.NotContains(t, v.Tail, "(cached)")
}

func TestGoTestJSONRewritesOnlyGoTest(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"go test ./...":                       "go test -json -count=1 ./...",
		"go vet ./... && go test -race ./...": "go vet ./... && go test -json -count=1 -race ./...",
		"cd sub; go test":                     "cd sub; go test -json -count=1",
		"go test -count=3 ./...":              "go test -json -count=3 ./...",
		"go test -json ./... | tee log":       "go test -count=1 -json ./... | tee log",
		"make test":                           "make test",
		"echo go test":                        "echo go test",
		"go testing":                          "go testing",
		"gotestsum -- ./...":                  "gotestsum -- ./...",
		"npm test":                            "npm test",
	} {
		require.Equal(t, want, GoTestJSON(in), in)
	}
}

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	pgid := make(chan int, 1)
	v := Run(t.Context(), Params{
		Dir:     t.TempDir(),
		Command: "sleep 30 & sleep 30; wait",
		Timeout: 300 * time.Millisecond,
		started: func(id int) { pgid <- id },
	})
	require.Equal(t, StatusError, v.Status)
	require.Contains(t, v.Detail, "timed out after 300ms")
	require.Less(t, v.Duration, 10*time.Second)
	requireGroupGone(t, <-pgid)
}

// A child that ignores SIGTERM is killed after the grace period.
func TestRunCancelKillsStubbornChildren(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	fifo := filepath.Join(t.TempDir(), "ready")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	go func() {
		// The shell writes to the fifo once its trap is set; opening the
		// fifo for reading blocks until then, so no sleep is needed.
		b, err := os.ReadFile(fifo)
		if err == nil && len(b) > 0 {
			cancel()
		}
	}()
	pgid := make(chan int, 1)
	v := Run(ctx, Params{
		Command: "trap '' TERM; echo ready > " + fifo + "; sleep 30",
		Timeout: time.Minute,
		started: func(id int) { pgid <- id },
	})
	require.Equal(t, StatusError, v.Status)
	require.Contains(t, v.Detail, "canceled")
	requireGroupGone(t, <-pgid)
}

// Background processes that outlive the shell are killed when it exits, and
// their open copy of the output pipe does not hold Run up.
func TestRunLeavesNoBackgroundProcess(t *testing.T) {
	t.Parallel()
	pgid := make(chan int, 1)
	v := Run(t.Context(), Params{
		Command: "sleep 30 & echo started",
		Timeout: time.Minute,
		started: func(id int) { pgid <- id },
	})
	require.Equal(t, StatusOK, v.Status)
	require.Equal(t, "started\n", v.Tail)
	require.Less(t, v.Duration, 10*time.Second)
	requireGroupGone(t, <-pgid)
}

func TestRunFloodKeepsOnlyTheTail(t *testing.T) {
	t.Parallel()
	v := Run(t.Context(), Params{Command: "yes | head -c 50000000; echo; echo '3 passed, 0 failed'", MaxOutput: 1000})
	require.Equal(t, StatusOK, v.Status, v.Detail)
	require.LessOrEqual(t, len(v.Tail), 1000)
	require.True(t, strings.HasSuffix(v.Tail, "y\n\n3 passed, 0 failed\n"), v.Tail[max(0, len(v.Tail)-40):])
	require.EqualValues(t, 50000000+1+len("3 passed, 0 failed\n"), v.OutputBytes)
	require.Equal(t, "✓ ok · tests green (3 passed)", v.Line())
}

func TestRunMissingCommand(t *testing.T) {
	t.Parallel()
	v := Run(t.Context(), Params{Command: "no-such-verify-command-here --all"})
	require.Equal(t, StatusError, v.Status)
	require.Equal(t, 127, v.ExitCode)
	require.Contains(t, v.Detail, "command not found (exit 127)")
	require.Contains(t, v.Detail, "no-such-verify-command-here")
	require.True(t, strings.HasPrefix(v.Line(), "✗ error · command not found"))
}

func TestRunCannotStart(t *testing.T) {
	t.Parallel()
	v := Run(t.Context(), Params{Dir: filepath.Join(t.TempDir(), "gone"), Command: "true"})
	require.Equal(t, StatusError, v.Status)
	require.Contains(t, v.Detail, "could not start")

	v = Run(t.Context(), Params{Command: "  "})
	require.Equal(t, StatusError, v.Status)
	require.Contains(t, v.Detail, "no verify command")
}

func TestRunPlainFailureIsIncomplete(t *testing.T) {
	t.Parallel()
	v := Run(t.Context(), Params{Command: "echo 'Tests: 4 passed, 2 failed' >&2; exit 1", Env: []string{}})
	require.Equal(t, StatusIncomplete, v.Status)
	require.Equal(t, "✗ incomplete · tests failing (4 passed, 2 failed)", v.Line())

	v = Run(t.Context(), Params{Command: "exit 3"})
	require.Equal(t, StatusIncomplete, v.Status)
	require.False(t, v.Counted)
	require.Equal(t, "exit 3", v.Detail)
}

func TestRunUsesEnv(t *testing.T) {
	t.Parallel()
	v := Run(t.Context(), Params{Command: `test "$ORCH_X" = yes`, Env: []string{"ORCH_X=yes"}})
	require.Equal(t, StatusOK, v.Status, v.Detail)
}
