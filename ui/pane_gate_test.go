package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestGateRunningIsSaid checks a running task between its session's end and
// the verdict says the verify gate is at work, not just "no live session".
func TestGateRunningIsSaid(t *testing.T) {
	t.Parallel()
	m := &Model{snap: coord.Snapshot{Tasks: []coord.TaskView{{
		Task: task.Task{ID: "01GATE", State: task.StateRunning, Phase: task.PhaseImplement, Verify: "go test ./..."},
		Gate: true,
	}}}}
	msg := noPane(m.snap.Tasks, "01GATE")
	require.True(t, strings.Contains(msg, "verify gate is re-running go test ./..."), msg)
}

// TestFinishedTaskShowsItsLastScreen checks the Live tab of a task with no
// live session shows the screen its last session ended on, as the engine
// replayed it, bottom rows first when it is taller than the pane, and
// without the blank rows below the agent's last words.
func TestFinishedTaskShowsItsLastScreen(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	m := New(newStubEngine(at), Options{Now: func() time.Time { return at }})
	tv := coord.TaskView{Task: task.Task{ID: "01DONE", State: task.StateCompleted}}
	m.selID = "01DONE"
	require.Equal(t, "no live session · the task is completed", strings.TrimSpace(ansi.Strip(m.panes.live(tv, true, m.tabs.lastScreen(tv.Task.ID), false, m.snap.Tasks, 60, 5)[0])),
		"before the detail arrives")

	rows := []string{"\x1b[1mline 1\x1b[m", "line 2", "line 3", "line 4", "line 5 " + strings.Repeat("x", 80), "", "   "}
	m.Update(detailMsg{id: "01DONE", d: coord.Detail{LastScreen: &coord.LastScreen{
		SessionID: "S1", Status: store.SessionExited, ExitCode: 0, Cols: 90, Rows: 7, Screen: strings.Join(rows, "\n"),
	}}})
	got := m.panes.live(tv, true, m.tabs.lastScreen(tv.Task.ID), false, m.snap.Tasks, 60, 5)
	require.Len(t, got, 5)
	for _, l := range got {
		require.Equal(t, 60, ansi.StringWidth(l), "%q", l)
	}
	require.Contains(t, ansi.Strip(got[0]), "the task is completed · its last session ended (exit 0)")
	require.Equal(t, []string{"line 2", "line 3", "line 4", "line 5 " + strings.Repeat("x", 53)},
		[]string{strings.TrimSpace(ansi.Strip(got[1])), strings.TrimSpace(ansi.Strip(got[2])), strings.TrimSpace(ansi.Strip(got[3])), strings.TrimSpace(ansi.Strip(got[4]))})

	m.selID, m.tabs.detailID = "OTHER", "OTHER"
	require.NotContains(t, ansi.Strip(strings.Join(m.panes.live(tv, true, m.tabs.lastScreen(tv.Task.ID), false, m.snap.Tasks, 60, 5), "\n")), "line 2", "another task's screen is never shown")
}

// The last screen's title says a session ended on the hangup or terminate
// a stop sends was stopped, not that it hung up; an agent's own exit, and
// a kill, keep their words.
func TestLastScreenTitleSaysAStopWasAStop(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status store.SessionStatus
		code   int
		want   string
	}{
		{store.SessionExited, 129, "was stopped (SIGHUP, exit 129)"},
		{store.SessionExited, 143, "was stopped (SIGTERM, exit 143)"},
		{store.SessionExited, 137, "ended (exit 137, killed)"},
		{store.SessionExited, 1, "ended (exit 1)"},
		{store.SessionKilled, 0, "ended (killed)"},
	} {
		require.Equal(t, c.want, sessionEnd(&coord.LastScreen{Status: c.status, ExitCode: c.code}))
	}
}
