package ui

import (
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// gWait is how long g waits for a second g (g g: the first task, as in vim
// and less) before it toggles the grid.
const gWait = 400 * time.Millisecond

// gTimeoutMsg ends the wait for a second g; seq tells a stale one apart.
type gTimeoutMsg struct{ seq int }

// startG begins g: a second g within gWait selects the first task; any
// other key, or the wait running out, toggles the grid.
func (m *Model) startG() tea.Cmd {
	m.pendingG = true
	m.gSeq++
	seq := m.gSeq
	return m.tick(gWait, func(time.Time) tea.Msg { return gTimeoutMsg{seq: seq} })
}

// secondG handles the key after g.
func (m *Model) secondG(msg tea.KeyPressMsg) tea.Cmd {
	m.pendingG = false
	if msg.String() == "g" {
		return m.selectEdge(false)
	}
	return tea.Batch(m.toggleGrid(), m.normalKey(msg))
}

func (m *Model) handleGTimeout(msg gTimeoutMsg) tea.Cmd {
	if !m.pendingG || msg.seq != m.gSeq {
		return nil
	}
	m.pendingG = false
	return m.toggleGrid()
}

// toggleGrid switches grid mode, keeping the selection among the cells.
func (m *Model) toggleGrid() tea.Cmd {
	m.grid = !m.grid
	if m.grid {
		if g := m.gridTasks(); len(g) > 0 && !containsTask(g, m.selID) {
			m.selID = g[0].Task.ID
			return tea.Batch(m.relayout(), m.selectionChanged())
		}
	}
	return m.relayout()
}

// selectEdge selects the first task of the list, or with last the last.
func (m *Model) selectEdge(last bool) tea.Cmd {
	vis := m.visible()
	if m.grid {
		vis = m.gridTasks()
	}
	if len(vis) == 0 {
		return nil
	}
	id := vis[0].Task.ID
	if last {
		id = vis[len(vis)-1].Task.ID
	}
	hold := m.holdOrder()
	if id == m.selID {
		return hold
	}
	m.selID = id
	return tea.Batch(hold, m.selectionChanged())
}

// newSearchInput is the `/` line.
func newSearchInput() textinput.Model {
	return newInput("/", "text in the id, title, state, phase or flag")
}

// openSearch opens the `/` line with the current text.
func (m *Model) openSearch() tea.Cmd {
	m.mode = modeSearch
	m.searchIn.SetValue(m.search.query)
	m.searchIn.CursorEnd()
	return m.searchIn.Focus()
}

// searchKey edits the `/` line; the list narrows as the operator types.
// enter keeps the filter, esc drops it.
func (m *Model) searchKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		m.mode = modeNormal
		m.searchIn.Blur()
		return nil
	case "esc":
		m.mode = modeNormal
		m.searchIn.Blur()
		return m.clearSearch()
	}
	var cmd tea.Cmd
	m.searchIn, cmd = m.searchIn.Update(msg)
	return tea.Batch(cmd, m.setSearch(m.searchIn.Value()))
}

func (m *Model) clearSearch() tea.Cmd {
	m.searchIn.SetValue("")
	return m.setSearch("")
}

// setSearch narrows the list to q and keeps the selection on a listed task.
func (m *Model) setSearch(q string) tea.Cmd {
	if q == m.search.query {
		return nil
	}
	before := m.selID
	m.search.query = q
	m.rebuildList()
	m.fixSelection()
	cmd := m.relayout()
	if m.selID != before {
		cmd = tea.Batch(cmd, m.selectionChanged())
	}
	return cmd
}
