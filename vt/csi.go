package vt

import (
	"github.com/charmbracelet/x/ansi"
)

// param returns parameter i, or def when it is missing or zero (the VT
// convention for counts).
func param(params ansi.Params, i, def int) int {
	if i >= len(params) {
		return def
	}
	v := params[i].Param(def)
	if v == 0 {
		return def
	}
	return v
}

// paramsOr returns the first parameter, 0 when missing.
func paramsOr(params ansi.Params, i int) int {
	if i >= len(params) {
		return 0
	}
	return params[i].Param(0)
}

func (t *Terminal) cursorUp(n int) {
	lim := 0
	if t.cur.y >= t.top {
		lim = t.top
	}
	t.cur.y = max(t.cur.y-n, lim)
	t.cur.x = min(t.cur.x, t.cols-1)
}

func (t *Terminal) cursorDown(n int) {
	lim := t.rows - 1
	if t.cur.y <= t.bottom {
		lim = t.bottom
	}
	t.cur.y = min(t.cur.y+n, lim)
	t.cur.x = min(t.cur.x, t.cols-1)
}

// originTop is the row CUP counts from: the top margin in origin mode.
func (t *Terminal) originTop() int {
	if t.cur.origin {
		return t.top
	}
	return 0
}

// moveTo places the cursor at column x, row y, relative to the scroll
// region in origin mode.
func (t *Terminal) moveTo(x, y int) {
	if t.cur.origin {
		y += t.top
		y = min(max(y, t.top), t.bottom)
	}
	t.cur.x = min(max(x, 0), t.cols-1)
	t.cur.y = min(max(y, 0), t.rows-1)
}

func (t *Terminal) eraseDisplay(mode int) {
	b := t.blank()
	x, y := t.cur.x, t.cur.y
	switch mode {
	case 0:
		if x == 0 && y == 0 && t.scrollsOnClear() {
			t.clearIntoHistory(b)
			return
		}
		t.clearCells(x, t.cols, b)
		t.emptyRows(y+1, t.rows-y-1, b)
	case 1:
		t.emptyRows(0, y, b)
		t.clearCells(0, min(x+1, t.cols), b)
	case 2:
		if t.scrollsOnClear() {
			t.clearIntoHistory(b)
			return
		}
		t.emptyRows(0, t.rows, b)
	case 3:
		t.hist.clear()
		t.hscrolled = 0
	}
}

// scrollsOnClear says an erased screen goes to the history first, as
// tmux's scroll-on-clear (on by default) does on the main screen.
func (t *Terminal) scrollsOnClear() bool { return t.scr == t.main && t.hist.limit > 0 }

// clearIntoHistory pushes the rows down to the last one written into the
// history and blanks the screen (tmux's grid_view_clear_history); a taller
// screen does not pull them back.
func (t *Terminal) clearIntoHistory(b Cell) {
	last := 0
	for y := range t.rows {
		if t.scr.line(y).used != 0 {
			last = y + 1
		}
	}
	if last > 0 {
		t.scr.scrollUp(0, t.rows-1, last, b, t.evict)
	}
	t.emptyRows(0, t.rows-last, b)
	t.hscrolled = 0
}

// emptyRows blanks n rows from y and unwraps the row above them, as tmux
// does when it clears whole lines.
func (t *Terminal) emptyRows(y, n int, b Cell) {
	if n <= 0 {
		return
	}
	for i := y; i < y+n; i++ {
		t.scr.line(i).empty(b)
	}
	t.unwrapAbove(y)
}

// unwrapAbove clears the wrapped mark of the row above row y, which is the
// newest history line for row 0.
func (t *Terminal) unwrapAbove(y int) {
	switch {
	case y > 0:
		t.scr.line(y - 1).wrapped = false
	case t.hist.n > 0:
		t.hist.ent(t.hist.n - 1).wrapped = false
	}
}

// clearCells blanks columns from..to of the cursor's row; the whole row is
// emptied as a line.
func (t *Terminal) clearCells(from, to int, b Cell) {
	if from >= to {
		return
	}
	if from == 0 && to == t.cols {
		t.emptyRows(t.cur.y, 1, b)
		return
	}
	l := t.scr.line(t.cur.y)
	l.fixWide(from, to-from)
	l.clear(from, to, b)
}

func (t *Terminal) eraseLine(mode int) {
	l := t.scr.line(t.cur.y)
	x := min(t.cur.x, t.cols)
	b := t.blank()
	switch {
	case mode == 2 || (mode == 0 && x == 0) || (mode == 1 && x >= t.cols-1):
		// tmux leaves a line never written alone, the row above included.
		if l.used == 0 && b == blankCell(0) && l.cells[0] == b && l.cells[t.cols-1] == b {
			return
		}
		t.emptyRows(t.cur.y, 1, b)
	case mode == 0:
		t.clearCells(x, t.cols, b)
	case mode == 1:
		t.clearCells(0, x+1, b)
	}
}

// insertLines is IL: n blank rows at the cursor's, within the region.
func (t *Terminal) insertLines(n int) {
	y := t.cur.y
	n = min(n, t.bottom+1-y)
	t.scr.scrollDown(y, t.bottom, n, t.blank())
	// tmux's line move unwraps the row above and the last row moved.
	t.unwrapAbove(y)
	if y+2*n-1 <= t.bottom {
		t.scr.line(y + 2*n - 1).wrapped = false
	}
}

// deleteLines is DL: n rows from the cursor's go, blanks come in at the
// bottom of the region.
func (t *Terminal) deleteLines(n int) {
	y := t.cur.y
	n = min(n, t.bottom+1-y)
	t.scr.scrollUp(y, t.bottom, n, t.blank(), nil)
	t.unwrapAbove(y)
	if kept := t.bottom + 1 - y - n; kept > 0 && n >= kept {
		t.scr.line(y + kept - 1).wrapped = false
	}
}

func (t *Terminal) restoreCursor(c cursor) {
	t.cur = c
	t.cur.x = min(t.cur.x, t.cols-1)
	t.cur.y = min(t.cur.y, t.rows-1)
	t.cur.styleID = t.styles.intern(t.cur.style)
}

func (t *Terminal) altOn(saveCursor bool) {
	if t.scr == t.alt {
		return
	}
	if saveCursor {
		t.savedAlt = t.cur
	}
	if t.alt == nil || t.alt.cols != t.cols || t.alt.rows != t.rows {
		t.alt = newScreen(t.cols, t.rows)
	}
	t.scr = t.alt
	t.emptyRows(0, t.rows, t.blank())
}

func (t *Terminal) altOff(restoreCursor bool) {
	if t.scr != t.alt {
		return
	}
	t.scr = t.main
	if restoreCursor {
		t.cur = t.savedAlt
		t.cur.styleID = t.styles.intern(t.cur.style)
	}
	// The main screen kept its size while the alternate one was up: it
	// takes the terminal's now, from the cursor the program comes back to.
	s := t.main
	if s.cols != t.cols || s.rows != t.rows {
		cx, cy := min(t.cur.x, s.cols), min(max(t.cur.y, 0), s.rows-1)
		t.cur.x, t.cur.y = t.resizeMain(cx, cy)
	}
	t.cur.x = min(t.cur.x, t.cols-1)
	t.cur.y = min(max(t.cur.y, 0), t.rows-1)
}

func (t *Terminal) softReset() {
	t.cur.style = Style{}
	t.cur.styleID = 0
	t.cur.origin = false
	t.cur.charset = [2]byte{'B', 'B'}
	t.cur.gl = 0
	t.top, t.bottom = 0, t.rows-1
	t.autowrap, t.insert, t.cursorHidden = true, false, false
	t.modes.AppCursor, t.modes.AppKeypad = false, false
}
