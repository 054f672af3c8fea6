package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/vt"
)

// ScreenshotsEnv names the folder TestScreenshots writes its captures to;
// unset, the test is skipped. docs/screenshots.sh sets it and renders the
// captures to PNG.
const ScreenshotsEnv = "ORCHESTRA_SCREENSHOTS"

// greenHarness is a second scripted harness whose agent fixes calc in one
// implement phase, so some tasks reach review while another is still live.
const greenHarness = `
[harness.green]
argv = %s
env = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY"]
delivery = "type"
ready = "scripted-agent ❯"
submit = '\r'
quiet = "150ms"
launch_timeout = "10s"
resubmit = "submit"

[[slots]]
name = "scripted"
harness = "scripted"
capacity = 1

[[slots]]
name = "green"
harness = "green"
capacity = 1
`

// TestScreenshots stages a console an operator might look at mid-run —
// one task live with a correction in its brief, two reviewed by the verify
// gate, one approved, one parked — and captures the Live and Brief tabs of
// the real binary from tmux, with and without colours.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		t.Skip("set " + ScreenshotsEnv + "=DIR to capture the console's screenshots (docs/screenshots.sh does)")
	}
	pace := 20
	fix := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	f := newFixture(t, agent.Script{PaceMS: &pace, Phases: map[task.Phase][]agent.Entry{
		task.PhasePlan:      {{Behave: agent.BehaveIgnoreFirst}},
		task.PhaseImplement: {{Behave: agent.BehaveStall, Edits: fix}},
	}}, "")
	green := agent.Script{PaceMS: &pace, Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Edits: fix}}}}
	data, err := json.Marshal(green)
	require.NoError(t, err)
	greenScript := filepath.Join(t.TempDir(), "green.json")
	require.NoError(t, os.WriteFile(greenScript, data, 0o644))
	argv, err := json.Marshal([]string{"{{self}}", "agent", "--script", greenScript})
	require.NoError(t, err)
	conf, err := os.OpenFile(filepath.Join(f.root, "orchestra.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fmt.Fprintf(conf, greenHarness, argv)
	require.NoError(t, err)
	require.NoError(t, conf.Close())

	add := func(title, harness, pipeline string) {
		f.orch(t, "add", "--title", title, "--goal", project.Goal, "--verify", project.VerifyCommand,
			"--harness", harness, "--pipeline", pipeline)
	}
	add("Fix Add and Mul", "scripted", "plan,implement")
	add("Make the calc tests green", "green", "implement")
	add("Cover Mul by zero", "green", "implement")
	add("Document package calc", "scripted", "plan")

	tm, raw := f.consolePiped(t)
	// The console selects the newest task at first; the correction is for
	// the one whose plan is running.
	tm.waitText(90*time.Second, "Fix Add and Mul")
	selectTask(tm, "Fix Add and Mul")
	tm.waitText(90*time.Second, "plan · running", strings.TrimSpace(agent.ReadyMarker))
	tm.answer("c", "keep the public API as it is; Mul(0, x) must be 0", 5*time.Second, "correction: ")
	tm.waitText(10*time.Second, "received human decision")
	tm.keys("r")
	tm.waitText(30*time.Second, "implement · running", "Thinking…")
	tm.waitText(90*time.Second, "2 awaiting review")

	selectTask(tm, "Cover Mul by zero")
	tm.keys("a")
	tm.waitText(10*time.Second, "1 awaiting review")
	selectTask(tm, "Document package calc")
	tm.keys("p")
	tm.waitScreen("the parked task", 10*time.Second, func(s string) bool { return selectedLine(s, "parked") })
	selectTask(tm, "Fix Add and Mul")
	tm.keys("1")
	tm.waitScreen("the live task selected", 10*time.Second, func(s string) bool {
		return headerNames(s, "Fix Add and Mul") && strings.Contains(s, "implement · running") && strings.Contains(s, "Thinking…")
	})
	capture(t, tm, raw, dir, "console-live")

	tm.keys("2")
	tm.waitText(10*time.Second, task.HeadingDecisions, "by operator", task.HeadingPhasePrefix+"implement")
	capture(t, tm, raw, dir, "console-brief")
}

// selectTask moves the selection to the task titled title, as a person
// would: up to the top, then down until the marker sits on it.
func selectTask(tm *tmuxTerm, title string) {
	tm.t.Helper()
	for range 10 {
		tm.keys("k")
	}
	// Wait for the keys to land, or a later j would be read against a
	// screen from before them and land after the check.
	tm.waitScreen("the selection at the top", 5*time.Second, func(s string) bool {
		lines := strings.Split(s, "\n")
		return len(lines) > 3 && strings.HasPrefix(lines[3], "▸")
	})
	for range 10 {
		s := tm.screen()
		if headerNames(s, title) {
			// The selected task's header names it in full; the list
			// may have shortened the title.
			return
		}
		before := selectedRow(s)
		tm.keys("j")
		tm.waitScreen("the selection to move down from "+before, 5*time.Second, func(s string) bool { return selectedRow(s) != before })
	}
	tm.t.Fatalf("no task titled %q in the list:\n%s", title, tm.screen())
}

// headerNames reports whether the selected task's header (the right-hand
// pane's first line) names the task titled title: its id, the title, then
// the end of the line, its flag or its phase.
func headerNames(screen, title string) bool {
	lines := strings.Split(screen, "\n")
	if len(lines) < 2 {
		return false
	}
	_, h, ok := strings.Cut(lines[1], "│")
	if !ok {
		h = lines[1]
	}
	h = strings.TrimRight(h, " ")
	return strings.HasSuffix(h, " "+title) || strings.Contains(h, " "+title+" ⚑") || strings.Contains(h, " "+title+" · ")
}

// selectedRow is the task list's selected row.
func selectedRow(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, "▸") {
			row, _, _ := strings.Cut(l, "│")
			return row
		}
	}
	return ""
}

// selectedLine reports whether the task list's selected row contains text.
func selectedLine(screen, text string) bool {
	return strings.Contains(selectedRow(screen), text)
}

// consolePiped opens the console like console does, with every byte it
// writes to the terminal also copied to a file by tmux (pipe-pane). The
// console starts only once the copy runs, so the file holds the whole
// stream from the first frame.
func (f fixture) consolePiped(t *testing.T) (*tmuxTerm, string) {
	t.Helper()
	raw := filepath.Join(t.TempDir(), "console.raw")
	cmdline := "read -r go; cd " + shellQuote(f.root) + " && exec " + shellQuote(f.bin) + " --in-process"
	tm := startTerm(t, cmdline, "COLORTERM=truecolor", "USER=operator")
	tm.run("pipe-pane", "-o", "-t", "main", "cat > "+shellQuote(raw))
	tm.keys("Enter")
	return tm, raw
}

// capture writes the screen as NAME.txt (plain, from tmux capture-pane) and
// NAME.ans (with its colours as escape sequences) into dir. The coloured
// copy replays the console's byte stream into a terminal emulator of the
// same size: tmux capture-pane -e leaves out cells cleared to a background
// colour (the header bar, the selected row), which the replay keeps.
func capture(t *testing.T, tm *tmuxTerm, raw, dir, name string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	screen := tm.screen()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".txt"), []byte(screen), 0o644))
	// tmux copies the stream to the file through a pipe of its own, so
	// the file may lag the screen a moment: look again until it caught up.
	var ans string
	caught := poll(10*time.Second, func() bool {
		ans = replay(t, raw)
		return slices.Equal(plainLines(screen), plainLines(ansi.Strip(ans)))
	})
	require.True(t, caught, "the replayed stream shows what tmux shows:\nwant\n%s\ngot\n%s", screen, ansi.Strip(ans))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".ans"), []byte(ans+"\n"), 0o644))
}

// replay writes the console's byte stream so far into a terminal emulator
// of the same size (the console's own, which the vt tests hold to tmux
// cell by cell) and returns its screen with colours.
func replay(t *testing.T, raw string) string {
	t.Helper()
	stream, err := os.ReadFile(raw)
	require.NoError(t, err)
	term := vt.New(termCols, termRows, 0, nil) // the console's queries need no answers
	_, err = term.Write(stream)
	require.NoError(t, err)
	buf := uv.NewScreenBuffer(termCols, termRows)
	term.Draw(buf, buf.Bounds())
	return fullStyleANSI(buf)
}

// fullStyleANSI writes the emulator's screen with a reset before every
// change of style, so a converter that knows only set-and-reset colour
// codes (aha has no "reverse off") reads it right.
func fullStyleANSI(emu interface{ CellAt(x, y int) *uv.Cell }) string {
	var b strings.Builder
	for y := range termRows {
		if y > 0 {
			b.WriteByte('\n')
		}
		var cur *uv.Style
		for x := range termCols {
			c := emu.CellAt(x, y)
			if c == nil || c.Width == 0 && c.Content == "" && x > 0 {
				continue // off screen, or the tail of a wide character
			}
			if cur == nil || !cur.Equal(&c.Style) {
				b.WriteString(ansi.ResetStyle)
				if !c.Style.IsZero() {
					b.WriteString(c.Style.String())
				}
				st := c.Style
				cur = &st
			}
			if c.Content == "" {
				b.WriteByte(' ')
			} else {
				b.WriteString(c.Content)
			}
		}
		b.WriteString(ansi.ResetStyle)
	}
	return b.String()
}

// plainLines is s's lines without trailing spaces or trailing empty lines.
func plainLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
