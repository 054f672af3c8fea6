package ui

import (
	"strings"
	"testing"

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
	for _, tv := range b.m.gridTasks() {
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
