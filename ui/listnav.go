package ui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// gWait is how long g waits for a second g (g g: the first task, as in vim
// and less) before it toggles the grid.
const gWait = 400 * time.Millisecond

// gTimeoutMsg ends the wait for a second g; seq tells a stale one apart.
type gTimeoutMsg struct{ seq int }

// gKey is the wait for a second g after g: a second g within gWait
// selects the first task; any other key, or the wait running out, toggles
// the grid.
type gKey struct {
	pending bool
	seq     int // tells a wait's timeout apart from an older one's
}

// start begins the wait; the root model schedules the message it returns.
func (g *gKey) start() gTimeoutMsg {
	g.pending = true
	g.seq++
	return gTimeoutMsg{seq: g.seq}
}

// timedOut reports whether msg ends the wait still pending.
func (g *gKey) timedOut(msg gTimeoutMsg) bool {
	if !g.pending || msg.seq != g.seq {
		return false
	}
	g.pending = false
	return true
}

// toggleGrid switches grid mode, keeping the selection among the cells.
func (m *Model) toggleGrid() tea.Cmd {
	m.grid = !m.grid
	if m.grid {
		if g := gridTasks(m.snap.Tasks, m.selID, m.width, m.height); len(g) > 0 && !containsTask(g, m.selID) {
			m.selID = g[0].Task.ID
			return tea.Batch(m.relayout(), m.selectionChanged())
		}
	}
	return m.relayout()
}

// toEdge is the step from the selection to the list's first (-toEdge)
// or last task.
const toEdge = 1 << 30

// step moves the selection delta rows through the list (in grid mode
// through the cells), clamped to its ends, and holds the rows' order for
// listHold (listhold.go).
func (m *Model) step(delta int) tea.Cmd {
	vis := m.tasks.visible()
	if m.grid {
		vis = gridTasks(m.snap.Tasks, m.selID, m.width, m.height)
	}
	if len(vis) == 0 && (delta == toEdge || delta == -toEdge) {
		return nil
	}
	until := m.tasks.hold(m.now())
	hold := m.tick(listHold, func(time.Time) tea.Msg { return until })
	id, moved := moveIn(vis, m.selID, delta)
	if !moved {
		return hold
	}
	m.selID = id
	return tea.Batch(hold, m.selectionChanged())
}

// newSearchInput is the `/` line.
func newSearchInput() textinput.Model {
	return newInput("/", "text in the id, title, state, phase or flag")
}

// searchKey edits the `/` line; the list narrows to what it holds as the
// operator types (the root model's setSearch). enter keeps the filter, esc
// drops it: both leave the line.
func (tl *taskList) searchKey(msg tea.KeyPressMsg) (cmd tea.Cmd, leave bool) {
	switch msg.String() {
	case "enter":
		tl.searchIn.Blur()
		return nil, true
	case "esc":
		tl.searchIn.Blur()
		tl.searchIn.SetValue("")
		return nil, true
	}
	tl.searchIn, cmd = tl.searchIn.Update(msg)
	return cmd, false
}

// searchPanel is the / line over the bottom of the body, w wide.
func (tl *taskList) searchPanel(st styles, w int) []string {
	return []string{
		st.sep.Render(strings.Repeat("─", w)),
		fit(tl.searchIn.View(), w),
	}
}

// setSearch narrows the list to q and keeps the selection on a listed task.
func (m *Model) setSearch(q string) tea.Cmd {
	if q == m.tasks.search.query {
		return nil
	}
	before := m.selID
	m.tasks.search.query = q
	m.tasks.rebuild(m.now())
	m.fixSelection()
	cmd := m.relayout()
	if m.selID != before {
		cmd = tea.Batch(cmd, m.selectionChanged())
	}
	return cmd
}
