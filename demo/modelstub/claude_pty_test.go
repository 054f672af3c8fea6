package modelstub

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// ptyClaude is the interactive CLI in a real pty, its output fed to a VT
// emulator. Only the pump goroutine touches the emulator's screen; it
// publishes each new screen on screens, keeping only the latest.
type ptyClaude struct {
	mu      sync.Mutex
	last    string
	ptmx    *os.File
	screens chan string
	exited  chan struct{}
}

func startPTY(t *testing.T, cmd *exec.Cmd, cols, rows int) *ptyClaude {
	t.Helper()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	require.NoError(t, err)
	p := &ptyClaude{ptmx: ptmx, screens: make(chan string, 1), exited: make(chan struct{})}
	emu := vt.NewSafeEmulator(cols, rows)
	// The emulator answers the CLI's terminal queries (cursor position,
	// colours) through its input side; unread, those answers block Write.
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(ptmx, emu)
	}()
	go func() {
		defer close(p.exited)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				_, _ = emu.Write(buf[:n])
				screen := emu.Emulator.String()
				p.mu.Lock()
				p.last = screen
				p.mu.Unlock()
				select {
				case <-p.screens:
				default:
				}
				p.screens <- screen
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
		_ = ptmx.Close()
		<-p.exited
		// Close the emulator's input pipe rather than the emulator: Close
		// writes a flag its Read checks without a lock.
		_ = emu.InputPipe().(io.Closer).Close()
		<-copied
	})
	return p
}

// screen returns the latest screen.
func (p *ptyClaude) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// waitScreen waits until ok accepts the screen, returning it, or fails the
// test at the deadline with the last screen seen.
func (p *ptyClaude) waitScreen(t *testing.T, ctx context.Context, what string, ok func(string) bool) string {
	t.Helper()
	last := ""
	for {
		select {
		case s := <-p.screens:
			last = s
			if ok(s) {
				return s
			}
		case <-p.exited:
			t.Fatalf("claude exited while waiting for %s; screen:\n%s", what, last)
		case <-ctx.Done():
			t.Fatalf("no %s before the deadline; screen:\n%s", what, last)
		}
	}
}

// readyPrompt reports whether screen shows the CLI's input prompt: a line
// starting with ❯ between two horizontal rules.
func readyPrompt(screen string) bool {
	lines := strings.Split(screen, "\n")
	rule := func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "───") }
	for i := 1; i+1 < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "❯") && rule(lines[i-1]) && rule(lines[i+1]) {
			return true
		}
	}
	return false
}

// waitFile waits with fsnotify until rel exists under root.
func waitFile(t *testing.T, ctx context.Context, root, rel string, p *ptyClaude) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	require.NoError(t, err)
	defer w.Close()
	path := filepath.Join(root, filepath.FromSlash(rel))
	// Watch every existing directory on the way down; add the rest as they
	// appear.
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if err := w.Add(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			require.NoError(t, err)
		}
		if dir == root || dir == filepath.Dir(dir) {
			break
		}
	}
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					_ = w.Add(ev.Name)
				}
			}
		case err := <-w.Errors:
			require.NoError(t, err)
		case <-ctx.Done():
			t.Fatalf("%s did not appear before the deadline; screen:\n%s", rel, p.screen())
		}
	}
}

// TestClaudeInteractiveInPTY starts the real CLI interactively in a pty,
// waits for its ready prompt, pastes an implement brief and waits for the
// artifact and the sentinel: the CLI reads and edits calc.go, runs the
// verify command with Bash, writes the artifact and the sentinel.
//
// Observed with Claude Code 2.1.332 (120x40 pty, seeded home, the stub):
//
//   - Start-up: the ready prompt shows 0.4-0.6 s after exec on an idle
//     machine, up to ~2 s under -race with other tests running. The CLI
//     sends no request to the stub before the first prompt, and none
//     besides the main loop during the turn: no title, topic or quota
//     side requests with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1.
//     Every main-loop request streams, offers 13 tools (12 in print mode)
//     and asks for the default model (claude-opus-5-5) with max_tokens
//     128000.
//
//   - The screen at ready: the logo with "Claude Code v2.1.332", the
//     model and billing line and the working directory; then blank lines,
//     an effort hint at the right ("◐ medium · /effort"), and the prompt:
//
//     ─────────────────────────────── (full width)
//     ❯
//     ───────────────────────────────
//     ⏵⏵ accept edits on
//
//   - Without SeedHome's acceptEdits default the CLI starts in auto mode,
//     sets --allowedTools Bash aside and stops the turn at a dialog ("Auto
//     mode can't check actions in this session") on the first Bash call;
//     without hasSeenAutoDefaultNudge a "Make auto mode your default
//     permission mode?" dialog opens over the prompt about a second after
//     it first shows, so a ready marker alone is not proof of readiness.
//
//   - A bracketed paste shows as "[Pasted text #1 +46 lines]" on the
//     prompt line; "\r" then submits it, and the message the stub receives
//     carries the brief's text in full.
//
//   - When the turn ends the prompt line reads "❯  Claude Code" until
//     typed into, still between two rules.
func TestClaudeInteractiveInPTY(t *testing.T) {
	t.Parallel()
	bin := claudecli.Require(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the verify command needs the go tool on PATH")
	}
	b := setup(t, PhaseScript(ScriptOptions{Code: EditFile("calc.go", "a - b", "a + b")}))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	cmd := exec.Command(bin, "--allowedTools", "Bash", "Edit", "Write")
	cmd.Dir = b.work
	cmd.Env = ClaudeEnv(b.home, b.base)
	started := time.Now()
	p := startPTY(t, cmd, 120, 40)

	screen := p.waitScreen(t, ctx, "ready prompt", readyPrompt)
	t.Logf("ready after %v; screen:\n%s", time.Since(started), screen)
	for _, r := range b.srv.Requests() {
		t.Logf("before the brief: %s %s model=%s tools=%d", r.Method, r.Path, r.Model, len(r.Tools))
	}

	_, err := p.ptmx.WriteString("\x1b[200~" + renderBrief(task.PhaseImplement) + "\x1b[201~")
	require.NoError(t, err)
	screen = p.waitScreen(t, ctx, "pasted brief", func(s string) bool { return strings.Contains(s, "Pasted text") })
	t.Logf("after paste:\n%s", screen)
	_, err = p.ptmx.WriteString("\r")
	require.NoError(t, err)

	waitFile(t, ctx, b.work, task.SentinelPath, p)
	_, err = task.ReadArtifact(b.work, task.PhaseImplement)
	require.NoError(t, err)
	t.Logf("sentinel after %v", time.Since(started))
	code, err := os.ReadFile(filepath.Join(b.work, "calc.go"))
	require.NoError(t, err)
	require.Contains(t, string(code), "return a + b")

	// The closing text shows once the CLI sent the last tool result back.
	screen = p.waitScreen(t, ctx, "closing text", func(s string) bool {
		return strings.Contains(s, "Phase implement is done") && readyPrompt(s)
	})
	t.Logf("at the end:\n%s", screen)
	reqs := b.srv.Requests()
	brief, ok := FindBrief(reqs[0])
	require.True(t, ok, "the first request carries the pasted brief")
	require.Equal(t, task.PhaseImplement, brief.Phase)
	require.Equal(t, "go vet ./...", brief.Verify)
	requireAuthorityOrder(t, reqs[0].Messages[brief.Index].Text, task.PhaseImplement)
	var results []ToolResult
	for _, m := range reqs[len(reqs)-1].Messages {
		results = append(results, m.ToolResults...)
	}
	require.Len(t, results, 5, "Read, Edit, Bash, Write, Write")
	for _, r := range results {
		require.False(t, r.IsError, "tool result: %s", r.Content)
	}
	for _, e := range b.srv.Exchanges() {
		t.Logf("%s %s model=%s tools=%d rule=%q stream=%v max=%d", e.Request.Method, e.Request.Path, e.Request.Model, len(e.Request.Tools), e.Rule, e.Request.Stream, e.Request.MaxTokens)
	}
}
