package ui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestProgramFocusEchoAndQuit drives the real program: focus the running
// agent, type into it, see its pane repaint through Subscribe's coalesced
// notices, leave focus and quit after the confirmation. Views are golden-
// tested elsewhere; WaitFor consumes output, so this checks interaction only.
func TestProgramFocusEchoAndQuit(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	var running task.ID
	for _, tv := range e.snap.Tasks {
		if tv.Task.State == task.StateRunning {
			running = tv.Task.ID
		}
	}
	// The stub agent echoes what it is sent, as a real pty would.
	e.onInput = func(id task.ID, b []byte) {
		e.panes[id].write("\r\nECHO:" + string(b))
		e.notices <- coord.Notice{Pane: id}
	}
	m := New(e, Options{NoAnim: true, Now: func() time.Time { return testNow }, RepoName: "acme/api"})
	for m.selID != running {
		m.selID, _ = moveIn(m.tasks.visible(), m.selID, 1)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	stop := Subscribe(tm.GetProgram(), e)
	defer stop()

	waitFor := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	waitFor("fix the flaky login test")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor("FOCUS")
	tm.Send(tea.KeyPressMsg{Code: 'z', Text: "z"})
	waitFor("ECHO:z")
	tm.Send(tea.KeyPressMsg{Code: ']', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	waitFor("Quit? y/n")
	tm.Send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	require.Equal(t, []byte("z"), e.typed(running))
}
