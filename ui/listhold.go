package ui

import (
	"slices"
	"time"

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

// hold keeps the rows where they are for listHold from now; the message
// the root model schedules ends it (endHold).
func (tl *taskList) hold(now time.Time) holdEndMsg {
	tl.holdUntil = now.Add(listHold)
	return holdEndMsg{until: tl.holdUntil}
}

// holding reports whether the rows keep their order now.
func (tl *taskList) holding(now time.Time) bool {
	return !tl.holdUntil.IsZero() && now.Before(tl.holdUntil)
}

// endHold re-sorts the list once the operator has paused, unless a later
// move renewed the hold; it reports whether it re-sorted (the root model
// then keeps the selection on its task wherever that went).
func (tl *taskList) endHold(msg holdEndMsg, now time.Time) bool {
	if !msg.until.Equal(tl.holdUntil) {
		return false // a later move holds the order longer
	}
	tl.holdUntil = time.Time{}
	tl.rebuild(now)
	return true
}

// heldPositions returns each listed task's row while the order is held,
// nil otherwise.
func (tl *taskList) heldPositions(now time.Time) map[task.ID]int {
	if !tl.holding(now) || len(tl.list) == 0 {
		return nil
	}
	pos := make(map[task.ID]int, len(tl.list))
	for i, tv := range tl.list {
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
