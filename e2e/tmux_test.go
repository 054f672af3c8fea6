package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lookInterval is how often a waiting test looks at the screen again: a
// person glancing at a terminal, not a sleep standing in for a signal. Every
// wait is bounded by its own deadline.
const lookInterval = 100 * time.Millisecond

// Terminal size the console is driven at.
const (
	termCols = 120
	termRows = 40
)

// needTmux skips the test when tmux is not installed: the smoke test drives
// the console through a real terminal multiplexer and has no substitute.
func needTmux(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: the console smoke test drives the real binary in tmux (apt-get install tmux)")
	}
	return path
}

// buildBinary puts orchestra-tui into dir and returns its path. The
// binary is also the scripted agent (its `agent` subcommand). It is built
// once per test binary (a link of the whole program costs seconds of CPU on
// two cores, and a dozen tests want it) and hard-linked, or copied, into
// each test's dir, so every test still runs its own file. Build flags
// (a -tags for the fault builds) make a build of its own.
func buildBinary(t testing.TB, dir string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(dir, "orchestra-tui")
	if len(flags) > 0 {
		args := append(append([]string{"build", "-o", bin}, flags...), "github.com/orchestra-tui/orchestra-tui/cmd/orchestra-tui")
		out, err := exec.Command("go", args...).CombinedOutput()
		require.NoError(t, err, "build orchestra-tui: %s", out)
		return bin
	}
	built, err := sharedBinary()
	require.NoError(t, err, "build orchestra-tui")
	if err := os.Link(built, bin); err != nil {
		data, err := os.ReadFile(built)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(bin, data, 0o755))
	}
	return bin
}

var (
	binOnce  sync.Once
	binDir   string
	binPath  string
	binError error
)

// sharedBinary builds orchestra-tui the first time it is asked for, into a
// directory TestMain removes when the tests end.
func sharedBinary() (string, error) {
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "e2e-bin-")
		if binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "orchestra-tui")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/orchestra-tui/orchestra-tui/cmd/orchestra-tui").CombinedOutput()
		if err != nil {
			binError = fmt.Errorf("%w: %s", err, out)
		}
	})
	return binPath, binError
}

// removeSharedBinary removes what sharedBinary built, if it built anything.
func removeSharedBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// tmuxTerm is one tmux server on its own socket with one session in it,
// so parallel tests never see each other's windows.
type tmuxTerm struct {
	t      testing.TB
	tmux   string
	socket string
}

// startTerm starts a detached tmux session of termCols x termRows running
// shell command cmdline, and kills its server when the test ends.
func startTerm(t testing.TB, cmdline string, env ...string) *tmuxTerm {
	t.Helper()
	return startTermSized(t, termCols, termRows, cmdline, env...)
}

// startTermSized is startTerm in a terminal of w x h from the start.
func startTermSized(t testing.TB, w, h int, cmdline string, env ...string) *tmuxTerm {
	t.Helper()
	tm := &tmuxTerm{t: t, tmux: needTmux(t), socket: "orch-e2e-" + randomName()}
	args := []string{"new-session", "-d", "-s", "main", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(args, cmdline)
	tm.run(args...)
	t.Cleanup(func() {
		// The server may already be gone; that is the state we want.
		_ = tm.try("kill-server")
	})
	return tm
}

func randomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// run runs one tmux command against this term's server. -f /dev/null keeps
// the machine's tmux.conf (key bindings, sizes) out of the test.
func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	out, err := tm.command(args...).CombinedOutput()
	require.NoError(tm.t, err, "tmux %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// try is run for a cleanup, where the server may already have gone.
func (tm *tmuxTerm) try(args ...string) error {
	return tm.command(args...).Run()
}

func (tm *tmuxTerm) command(args ...string) *exec.Cmd {
	return exec.Command(tm.tmux, append([]string{"-L", tm.socket, "-f", os.DevNull}, args...)...)
}

// keys presses keys by tmux name (Enter, Tab, C-c) or as single characters.
func (tm *tmuxTerm) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

// typeText types s literally, as a person typing it.
func (tm *tmuxTerm) typeText(s string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "main", "-l", s)
}

// answer presses key, waits up to d until the screen shows every one of
// prompts (the line the key opened), types text into it and presses
// Enter: a correction, a comment, any one-line input of the console.
func (tm *tmuxTerm) answer(key, text string, d time.Duration, prompts ...string) {
	tm.t.Helper()
	tm.keys(key)
	tm.waitText(d, prompts...)
	tm.typeText(text)
	tm.keys("Enter")
}

// screen is the visible screen as plain text.
func (tm *tmuxTerm) screen() string {
	tm.t.Helper()
	return tm.run("capture-pane", "-p", "-t", "main")
}

// colourScreen is the visible screen with its colours as SGR sequences.
func (tm *tmuxTerm) colourScreen() string {
	tm.t.Helper()
	return tm.run("capture-pane", "-p", "-e", "-t", "main")
}

// screenWithHistory is the screen as plain text, with up to lines of the
// history above it.
func (tm *tmuxTerm) screenWithHistory(lines int) string {
	tm.t.Helper()
	return tm.run("capture-pane", "-p", "-t", "main", "-S", strconv.Itoa(-lines))
}

// resize resizes the terminal and waits until tmux reports the new size.
func (tm *tmuxTerm) resize(w, h int) {
	tm.t.Helper()
	want := fmt.Sprintf("%dx%d", w, h)
	var got string
	// tmux has no signal for a resize applied: look again.
	if !poll(30*time.Second, func() bool {
		tm.run("resize-window", "-t", "main", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
		got = strings.TrimSpace(tm.run("display-message", "-p", "-t", "main", "#{window_width}x#{window_height}"))
		return got == want
	}) {
		tm.t.Fatalf("tmux window is %s, want %s", got, want)
	}
}

// panePID is the process id of the program the pane runs.
func (tm *tmuxTerm) panePID() int {
	tm.t.Helper()
	out := strings.TrimSpace(tm.run("display-message", "-p", "-t", "main", "#{pane_pid}"))
	pid, err := strconv.Atoi(out)
	require.NoError(tm.t, err, "pane pid %q", out)
	return pid
}

// poll calls done every lookInterval until it reports true, and reports
// whether it did within d. Every wait of these tests on something outside
// the test process (a screen, a file, the ledger) is one poll.
func poll(d time.Duration, done func() bool) bool {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(lookInterval)
	defer tick.Stop()
	for {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
}

// waitScreen looks at the screen every lookInterval until ok holds for it
// and returns that screen; past the deadline it fails the test showing the
// last screen seen and what it was waiting for.
func (tm *tmuxTerm) waitScreen(what string, d time.Duration, ok func(string) bool) string {
	tm.t.Helper()
	var s string
	if !poll(d, func() bool { s = tm.screen(); return ok(s) }) {
		tm.t.Fatalf("waited %s for %s; the screen was:\n%s", d, what, s)
	}
	return s
}

// waitScreenOK is waitScreen that reports a timeout instead of failing.
func (tm *tmuxTerm) waitScreenOK(d time.Duration, ok func(string) bool) bool {
	tm.t.Helper()
	return poll(d, func() bool { return ok(tm.screen()) })
}

// waitText waits until the screen contains every one of texts.
func (tm *tmuxTerm) waitText(d time.Duration, texts ...string) string {
	tm.t.Helper()
	return tm.waitScreen(strings.Join(quoteAll(texts), " and "), d, func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
