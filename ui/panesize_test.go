package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Every layout change leaves each drawn pane's pty at exactly the size the
// frame draws it at: terminal size, tabs, grid cells, focus and zoom.
func TestPaneSizeFollowsEveryLayout(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(100, 30).selectState(task.StateRunning)
	id := b.m.selID
	drawn := func() [2]int {
		l := b.m.layout()
		return [2]int{l.rightW, l.contentH}
	}
	require.Equal(t, drawn(), b.eng.resizes[id], "narrow layout: the list above the pane")
	b.size(200, 50)
	require.Equal(t, drawn(), b.eng.resizes[id], "wide layout: the list beside the pane")

	// Another tab hides the pane: it keeps its last size.
	before := b.eng.resizes[id]
	b.press("2")
	require.Equal(t, before, b.eng.resizes[id])
	b.press("1")

	// Zoom: the whole terminal but one status line, and back on leaving.
	b.press("z")
	require.Equal(t, modeFocus, b.m.mode)
	require.Equal(t, [2]int{200, 49}, b.eng.resizes[id])
	lines := strings.Split(b.view(), "\n")
	require.Len(t, lines, 50)
	require.Contains(t, ansi.Strip(lines[49]), "ZOOM · ctrl+] to leave")
	b.size(100, 30)
	require.Equal(t, [2]int{100, 29}, b.eng.resizes[id], "a zoomed pane follows the terminal")
	b.press("ctrl+]")
	require.Equal(t, modeNormal, b.m.mode)
	require.Equal(t, drawn(), b.eng.resizes[id])
	require.NotContains(t, ansi.Strip(b.view()), "ZOOM")

	// Grid: every cell's pane gets the cell's size less its title row.
	b.size(200, 50).press("g")
	l := b.m.layout()
	for _, tv := range gridTasks(b.m.snap.Tasks, b.m.selID, b.m.width, b.m.height) {
		require.Equal(t, [2]int{l.cellW, l.cellH - 1}, b.eng.resizes[tv.Task.ID], tv.Task.ID.Short())
	}
}

// Sizes are sent in the order they were asked even though each send runs
// on a goroutine of its own: a late-running command sends the newest size.
func TestResizerSendsTheNewestSize(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	r := newResizer()
	id := task.ID("T1")
	first := r.ask(b.eng, id, [2]int{80, 20})
	second := r.ask(b.eng, id, [2]int{120, 40})
	second()
	first() // ran last, as a goroutine may
	require.Equal(t, [2]int{120, 40}, b.eng.resizes[id])
}

// asksForSize reports whether cmd, or a command it batches, reads the
// terminal's size again.
func asksForSize(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			if asksForSize(c) {
				return true
			}
		}
	default:
		return msg == tea.RequestWindowSize()
	}
	return false
}

// Bubbletea sends the size it read at start from a goroutine of its own, so
// a resize right after start can arrive before that stale size: each change
// of size makes the console read the size again, and the same size twice
// ends it.
func TestEveryNewSizeIsReadAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(200, 50)
	_, cmd := b.m.Update(tea.WindowSizeMsg{Width: 120, Height: 40}) // the stale one
	require.True(t, asksForSize(cmd), "a new size is read again")
	_, cmd = b.m.Update(tea.WindowSizeMsg{Width: 200, Height: 50}) // what the terminal says
	require.True(t, asksForSize(cmd))
	_, cmd = b.m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	require.False(t, asksForSize(cmd), "the same size again ends it")
	require.Equal(t, [2]int{200, 50}, [2]int{b.m.width, b.m.height})
}

// The marker of a pane another console sized is drawn from the pane's own
// size, not from the engine's answer to the ask: a size a relay held and
// answered as taken (engine/relay.go) is marked once the pane comes at the
// size the holder's owner gave it.
func TestAPaneAtAnotherSizeIsMarkedWhateverTheAnswerSaid(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(140, 40)
	leased := fixtureID(1) // its stub pane is 80x24
	for b.m.selID != leased {
		b.press("j")
	}
	sz, ok := b.m.wantedPanes()[leased]
	require.True(t, ok)
	require.NotEqual(t, [2]int{80, 24}, sz)
	// The holder's owner keeps the pty at 80x24 (the stub resized it to
	// the size asked).
	b.eng.panes[leased].resize(80, 24)
	b.send(resizeDoneMsg{id: leased, asked: sz, took: sz, sized: true})
	require.Contains(t, b.view(), "pty 80x24 · sized by another console")

	b.eng.panes[leased].resize(sz[0], sz[1])
	b.send(panesMsg{ids: []task.ID{leased}})
	require.NotContains(t, b.view(), "sized by another console", "at the size asked, no marker")
}
