package e2e

import (
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
	t.Parallel()
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
	tm.keys("c")
	tm.waitText(5*time.Second, "correction: ")
	tm.typeText(correction)
	tm.keys("Enter")
	tm.waitText(120*time.Second, "1 awaiting review")

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
	casts, err := filepath.Glob(filepath.Join(f.root, ".orchestra", "runs", "*", sessionID+".cast"))
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
	want := strings.Split(term.Text(), "\n")
	require.True(t, containsBlock(s, want), "the replayed pane is the recording at %.3f s:\nwant\n%s\nscreen\n%s", offset, term.Text(), s)

	// The view at the other sizes the console is used at.
	for _, size := range [][2]string{{"80", "24"}, {"200", "50"}, {"100", "30"}} {
		tm.run("resize-window", "-t", "main", "-x", size[0], "-y", size[1])
		h := atoi(t, size[1])
		got := tm.waitScreen("the replay redrawn at "+size[0]+"x"+size[1], 10*time.Second, func(s string) bool {
			lines := strings.Split(s, "\n")
			return len(lines) >= h && strings.Contains(lines[h-2], "REPLAY · esc to leave") && strings.Contains(s, "◆ correction")
		})
		t.Logf("the replay at %sx%s:\n%s", size[0], size[1], got)
		for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
			require.LessOrEqual(t, ansi.StringWidth(l), atoi(t, size[0]), "a line overflows at %sx%s:\n%s", size[0], size[1], got)
		}
	}
	tm.keys("q")
	tm.waitScreen("the replay left", 10*time.Second, func(s string) bool { return !strings.Contains(s, "REPLAY") })
}

// containsBlock reports whether rows (trailing blanks dropped) stand on
// consecutive lines of screen, each at one cell column: the pane's.
func containsBlock(screen string, rows []string) bool {
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	k := 0 // the first row with text anchors the search
	for k < len(rows) && strings.TrimSpace(rows[k]) == "" {
		k++
	}
	if k == len(rows) {
		return false
	}
	w := 0
	for _, r := range rows {
		w = max(w, ansi.StringWidth(r))
	}
	lines := strings.Split(screen, "\n")
	anchor := strings.TrimRight(rows[k], " ")
	for i, l := range lines {
		at := strings.Index(l, anchor)
		top := i - k
		if at < 0 || top < 0 || top+len(rows) > len(lines) {
			continue
		}
		col := ansi.StringWidth(l[:at])
		ok := true
		for j, r := range rows {
			got := strings.TrimRight(ansi.Cut(lines[top+j], col, col+w), " ")
			if got != strings.TrimRight(r, " ") {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func atoi(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9')
		n = n*10 + int(c-'0')
	}
	return n
}
