package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestReplayInTheConsole replays a finished session in the real console:
// a scripted agent waits for a correction, gets it typed in, and finishes
// green; w replays its recording, [ jumps mark by mark back to the
// correction,
// and the pane shows exactly the screen the recording replayed by the
// emulator alone gives at the offset of the correction's ledger event.
func TestReplayInTheConsole(t *testing.T) {
	parallel(t)
	f := newFixture(t, agent.Script{PaceMS: new(int), Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{AwaitDecision: true, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, "")
	f.addTask(t, "Fix calc", "implement")
	tm := f.console(t)
	tm.waitText(90*time.Second, "Fix calc", strings.TrimSpace(agent.ReadyMarker))
	// The agent has read its brief: a correction given before that goes
	// into the brief, and the agent would wait for a typed one for ever.
	tm.waitText(90*time.Second, "● Phase implement, attempt 1")
	const correction = "keep Add pure"
	tm.answer("c", correction, 5*time.Second, "correction: ")
	tm.waitText(120*time.Second, "1 awaiting review")

	s := replayToCorrection(t, tm, correction)

	// The same moment from the files alone: the correction's ledger event
	// on the recording's clock, and the recording replayed to it.
	var sessionID string
	var at time.Time
	for _, r := range f.ledger(t) {
		if r.Kind == task.EvDecisionDelivered {
			sessionID, at = r.Session, *r.At
		}
	}
	require.NotEmpty(t, sessionID)
	want, size, offset := castScreenAt(t, f.root, sessionID, at)
	require.True(t, replayShows(s, termCols, want, size), "the replayed pane is the recording (%dx%d) at %.3f s:\nwant\n%s\nscreen\n%s",
		size[0], size[1], offset, strings.Join(want, "\n"), s)

	// The view at the other sizes the console is used at.
	for _, size := range [][2]int{{80, 24}, {200, 50}, {100, 30}} {
		w, h := size[0], size[1]
		tm.resize(w, h)
		got := tm.waitScreen(fmt.Sprintf("the replay redrawn at %dx%d", w, h), 10*time.Second, func(s string) bool {
			lines := strings.Split(s, "\n")
			return len(lines) >= h && strings.Contains(lines[h-2], "REPLAY · esc to leave") && strings.Contains(s, "◆ correction")
		})
		t.Logf("the replay at %dx%d:\n%s", w, h, got)
		for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
			require.LessOrEqual(t, ansi.StringWidth(l), w, "a line overflows at %dx%d:\n%s", w, h, got)
		}
	}
	tm.keys("q")
	tm.waitScreen("the replay left", 10*time.Second, func(s string) bool { return !strings.Contains(s, "REPLAY") })
}

// replayToCorrection presses w on the selected task, waits for its
// replay to play to the end, and goes back mark by mark with [ to the
// correction's mark, whose line names it with its text; it returns that
// screen.
func replayToCorrection(t *testing.T, tm *tmuxTerm, correction string) string {
	t.Helper()
	tm.keys("w")
	// It plays as it opens; the session is short, so it ends soon, and
	// [ goes back mark by mark.
	tm.waitText(60*time.Second, "REPLAY · esc to leave", "■ end")
	var s string
	for range 10 {
		tm.keys("[")
		s = tm.waitText(10*time.Second, "paused")
		if strings.Contains(s, "◆ correction") {
			break
		}
	}
	require.Contains(t, s, "◆ correction", "[ reaches the correction's mark:\n%s", s)
	require.Contains(t, s, "correction at ", "the mark's line names it")
	require.Contains(t, s, correction, "with the decision's text")
	return s
}

// castScreenAt is the screen of session's recording in the clone at root
// replayed by the emulator alone up to at on the recording's clock, as
// rows, its size there, and at as seconds into the recording.
func castScreenAt(t *testing.T, root, sessionID string, at time.Time) ([]string, [2]int, float64) {
	t.Helper()
	casts, err := filepath.Glob(filepath.Join(root, ".orchestra", "runs", "*", sessionID+".cast"))
	require.NoError(t, err)
	require.Len(t, casts, 1)
	file, err := os.Open(casts[0])
	require.NoError(t, err)
	defer file.Close()
	cs, err := session.NewCastScanner(file)
	require.NoError(t, err)
	h := cs.Header()
	require.NotZero(t, h.StartNS)
	offset := at.Sub(time.Unix(0, h.StartNS)).Seconds()
	term := session.NewTerminal(h.Width, h.Height, -1, nil)
	for cs.Scan() {
		if ev := cs.Event(); ev.Time <= offset {
			session.ReplayEvent(term, ev)
		}
	}
	require.NoError(t, cs.Err())
	cols, rows := term.Size()
	return strings.Split(term.Text(), "\n"), [2]int{cols, rows}, offset
}

// replayShows reports whether the replay's screen s, of a terminal width
// cells wide, shows rows, the recording's screen of size recorded, as the
// pane shows a recording: at its recorded size, cut at the pane's edge
// (the pane reaches the terminal's right edge), and, at a size other than
// the pane's, its last row saying the recorded size.
func replayShows(s string, width int, rows []string, recorded [2]int) bool {
	col, ok := blockAt(s, width, rows)
	if !ok {
		return false
	}
	mark := fmt.Sprintf("recorded at %dx%d", recorded[0], recorded[1])
	if recorded[0] != width-col {
		return strings.Contains(s, mark)
	}
	return !strings.Contains(s, "recorded at ") || strings.Contains(s, mark)
}

// blockAt reports whether rows (trailing blanks dropped) stand on
// consecutive lines of screen, each at one cell column, the pane's, which
// it returns. The screen is width cells wide and the pane reaches its
// right edge: rows wider than the pane are cut at that edge.
func blockAt(screen string, width int, rows []string) (int, bool) {
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	k := 0 // the first row with text anchors the search
	for k < len(rows) && strings.TrimSpace(rows[k]) == "" {
		k++
	}
	if k == len(rows) {
		return 0, false
	}
	w := 0
	for _, r := range rows {
		w = max(w, ansi.StringWidth(r))
	}
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		top := i - k
		if top < 0 || top+len(rows) > len(lines) {
			continue
		}
		// The anchor as the pane shows it: cut at its edge, found by
		// trying each column the pane could start at.
		for col := 0; col < ansi.StringWidth(l); col++ {
			cw := min(w, width-col)
			anchor := strings.TrimRight(ansi.Truncate(rows[k], cw, ""), " ")
			if anchor == "" || !strings.HasPrefix(ansi.Cut(l, col, col+cw), anchor) {
				continue
			}
			ok := true
			for j, r := range rows {
				got := strings.TrimRight(ansi.Cut(lines[top+j], col, col+cw), " ")
				if got != strings.TrimRight(ansi.Truncate(r, cw, ""), " ") {
					ok = false
					break
				}
			}
			if ok {
				return col, true
			}
		}
	}
	return 0, false
}
