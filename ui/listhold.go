package ui

import (
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// listHold is how long after the operator's last move through the list
// (j, k, g g, G) its rows keep their order: a task that re-sorts between
// two keystrokes would make `j j`, typed from memory of the screen, land
// on another task. New tasks go at the end meanwhile; the list re-sorts
// once the operator pauses.
const listHold = 2 * time.Second

// holdEndMsg ends the hold set at until, unless a later move renewed it.
type holdEndMsg struct{ until time.Time }

// holdOrder keeps the rows where they are for listHold from now.
func (m *Model) holdOrder() tea.Cmd {
	m.holdUntil = m.now().Add(listHold)
	until := m.holdUntil
	return m.tick(listHold, func(time.Time) tea.Msg { return holdEndMsg{until: until} })
}

// holding reports whether the rows keep their order now.
func (m *Model) holding() bool {
	return !m.holdUntil.IsZero() && m.now().Before(m.holdUntil)
}

// endHold re-sorts the list once the operator has paused; the selection
// stays on its task wherever that goes.
func (m *Model) endHold(msg holdEndMsg) tea.Cmd {
	if !msg.until.Equal(m.holdUntil) {
		return nil // a later move holds the order longer
	}
	m.holdUntil = time.Time{}
	m.rebuildList()
	m.fixSelection()
	return m.relayout()
}

// heldPositions returns each listed task's row while the order is held,
// nil otherwise.
func (m *Model) heldPositions() map[task.ID]int {
	if !m.holding() || len(m.list) == 0 {
		return nil
	}
	pos := make(map[task.ID]int, len(m.list))
	for i, tv := range m.list {
		pos[tv.Task.ID] = i
	}
	return pos
}

// keepHeld reorders keys (already sorted) so the tasks of pos keep their
// rows' order and come first; the others follow in their sorted order.
func keepHeld[K any](keys []K, id func(K) task.ID, pos map[task.ID]int) {
	if pos == nil {
		return
	}
	slices.SortStableFunc(keys, func(a, b K) int {
		pa, oka := pos[id(a)]
		pb, okb := pos[id(b)]
		switch {
		case oka && okb:
			return pa - pb
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
}
