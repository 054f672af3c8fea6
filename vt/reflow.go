package vt

import "math"

// Resize changes the screen size the way tmux 3.3 does. A shorter screen
// first drops blank rows below the cursor, then pushes rows off the top
// into the history, so the bottom (where the program is writing) stays; a
// taller one pulls back the lines that scrolled into the history. A new
// width re-wraps the main screen and its history: rows that wrapped at the
// margin join and split again at the new one, the cursor stays on its
// character, and rows that now fit or overflow move the screen up or down
// (tmux's grid_reflow). The alternate screen is cut or padded, and the
// main screen waits at its old size until the program leaves it.
func (t *Terminal) Resize(cols, rows int) {
	cols, rows = max(cols, 1), max(rows, 1)
	if cols == t.cols && rows == t.rows {
		return
	}
	t.version++
	rowsChanged := rows != t.rows
	if cols != t.cols {
		t.cols = cols
		t.tabs.reset(t.cols)
	}
	t.rows = rows
	if t.scr == t.alt {
		t.alt.resizeCols(cols)
		t.cur.y = t.resizeRows(t.alt, rows, t.cur.y, false)
		// tmux leaves the column alone, past the margin too: the next
		// character wraps or a move brings it back.
	} else {
		t.cur.x, t.cur.y = t.resizeMain(t.cur.x, t.cur.y)
	}
	if rowsChanged {
		t.top, t.bottom = 0, t.rows-1
	}
	t.saved.x, t.saved.y = min(t.saved.x, t.cols-1), min(t.saved.y, t.rows-1)
	// The cursor saved on entering the alternate screen belongs to the
	// main screen, which keeps its size until then.
}

// resizeMain brings the main screen from its size to the terminal's, with
// the cursor at cx, cy on it, and returns where the cursor is after.
func (t *Terminal) resizeMain(cx, cy int) (int, int) {
	s := t.main
	if s.rows != t.rows {
		cy = t.resizeRows(s, t.rows, cy, t.hist.limit > 0)
	}
	if s.cols != t.cols {
		cx, cy = t.reflow(t.cols, cx, cy)
	}
	return cx, cy
}

// resizeRows gives s rows rows and returns the cursor's row after.
// history says rows pushed off the top go to the history and a taller
// screen pulls them back; without it the top rows are dropped.
func (t *Terminal) resizeRows(s *screen, rows, cy int, history bool) int {
	ls := s.rowsInOrder()
	if rows < len(ls) {
		need := len(ls) - rows
		// Rows below the cursor go first.
		below := min(len(ls)-1-cy, need)
		ls = ls[:len(ls)-below]
		need -= below
		for _, l := range ls[:need] {
			if history {
				t.hist.push(l, t.glyphs.clusters)
				t.hscrolled = min(t.hscrolled+1, t.hist.len())
			}
		}
		ls = ls[need:]
		cy -= need
	} else {
		need := rows - len(ls)
		var pulled []*line
		for history && len(pulled) < need && t.hscrolled > 0 {
			l := newLine(s.cols)
			if !t.hist.pop(l, t.glyphs.clusters) {
				break
			}
			t.hscrolled--
			pulled = append(pulled, l)
		}
		top := make([]*line, 0, rows)
		for i := len(pulled) - 1; i >= 0; i-- {
			top = append(top, pulled[i])
		}
		ls = append(top, ls...)
		for len(ls) < rows {
			ls = append(ls, newLine(s.cols))
		}
		cy += len(pulled)
	}
	s.setRows(ls)
	return cy
}

// rrow is one row of the main screen and its history during a reflow:
// a line, or a history line's encoding carried over without decoding it.
type rrow struct {
	l       *line
	enc     []byte
	used    int
	wrapped bool
}

func lineRow(l *line) rrow { return rrow{l: l, used: l.used, wrapped: l.wrapped} }

// reflow re-wraps the history and the main screen at cols, as tmux's
// grid_reflow, with the cursor at cx, cy; it returns the cursor after.
// A history line that is alone on its row and fits is carried over as it
// is encoded, so only wrapped lines and lines too long are decoded.
func (t *Terminal) reflow(cols, cx, cy int) (int, int) {
	s := t.main
	hn := t.hist.len()
	src := make([]rrow, 0, hn+s.rows)
	for i := range hn {
		e := t.hist.ent(i)
		src = append(src, rrow{enc: t.hist.encoded(e), used: int(e.used), wrapped: e.wrapped})
	}
	for y := range s.rows {
		src = append(src, lineRow(s.line(y)))
	}
	wx, wy := wrapPosition(src, cx, hn+cy)

	hs := t.hscrolled
	out := make([]rrow, 0, len(src)+8)
	var group []*line
	for yy := 0; yy < len(src); {
		end := yy
		for end < len(src)-1 && src[end].wrapped {
			end++
		}
		if end == yy && src[yy].used <= cols {
			out = append(out, src[yy])
			yy++
			continue
		}
		group = group[:0]
		for i := yy; i <= end; i++ {
			group = append(group, src[i].decode(t.glyphs.clusters))
		}
		rf := reflower{sx: cols, src: group, dead: make([]bool, len(group)), srcBase: yy, outBase: len(out), hscrolled: hs}
		rf.run()
		hs = rf.hscrolled
		for _, l := range rf.target {
			out = append(out, lineRow(l))
		}
		yy = end + 1
	}
	for len(out) < s.rows {
		out = append(out, lineRow(newLine(cols)))
	}
	hsize := len(out) - s.rows
	ncx, ncy := unwrapPosition(out, wx, wy)

	// The history from the rows above the screen, the screen from the rest.
	h2 := t.spareHist
	h2.clear()
	h2.limit = t.hist.limit
	for _, r := range out[:hsize] {
		if r.l != nil {
			h2.push(r.l, t.glyphs.clusters)
		} else {
			h2.pushEncoded(r.enc, r.wrapped, r.used)
		}
	}
	ls := make([]*line, s.rows)
	for i, r := range out[hsize:] {
		l := r.l
		if l == nil {
			l = r.decode(t.glyphs.clusters)
		}
		resizeLine(l, cols)
		l.used = min(l.used, cols)
		ls[i] = l
	}
	t.spareHist, t.hist = t.hist, h2
	s.setRows(ls)
	s.cols = cols
	t.hscrolled = min(hs, hsize, t.hist.len())

	if ncy < hsize {
		return 0, 0
	}
	return min(ncx, cols), ncy - hsize
}

// decode returns r as a line of its own cells: at least used wide; clusters
// is the glyph table its encoding names clusters in.
func (r rrow) decode(clusters []string) *line {
	if r.l != nil {
		// The reflow works on every cell the line holds, as tmux's does.
		r.l.cells, r.l.hidden = r.l.held(), 0
		return r.l
	}
	l := &line{used: r.used, wrapped: r.wrapped}
	eachEncoded(r.enc, clusters, func(c Cell, w int) {
		l.cells = append(l.cells, c)
		if w == 2 {
			l.cells = append(l.cells, Cell{Style: c.Style})
		}
	})
	for len(l.cells) < l.used {
		l.cells = append(l.cells, blankCell(0))
	}
	return l
}

// wrapPosition is tmux's grid_wrap_position: the cursor as a column of its
// unwrapped line (MaxInt past the line's end) and that line's index.
func wrapPosition(rows []rrow, px, py int) (wx, wy int) {
	ax, ay := 0, 0
	for yy := range py {
		if rows[yy].wrapped {
			ax += rows[yy].used
		} else {
			ax, ay = 0, ay+1
		}
	}
	if px >= rows[py].used {
		return math.MaxInt, ay
	}
	return ax + px, ay
}

// unwrapPosition is tmux's grid_unwrap_position, back from wrapPosition.
func unwrapPosition(rows []rrow, wx, wy int) (px, py int) {
	yy, ay := 0, 0
	for ; yy < len(rows)-1; yy++ {
		if ay == wy {
			break
		}
		if !rows[yy].wrapped {
			ay++
		}
	}
	if wx == math.MaxInt {
		for yy < len(rows)-1 && rows[yy].wrapped {
			yy++
		}
		return rows[yy].used, yy
	}
	for yy < len(rows)-1 && rows[yy].wrapped {
		if wx < rows[yy].used {
			break
		}
		wx -= rows[yy].used
		yy++
	}
	return wx, yy
}

// reflower re-wraps one run of rows joined by wrap marks (src) at width
// sx: a line by line port of tmux's grid_reflow, grid_reflow_split and
// grid_reflow_join, so the rows come out exactly where tmux puts them.
// srcBase and outBase place the run in the whole screen and history, for
// the count of history lines a taller screen may pull back (hscrolled).
type reflower struct {
	sx               int
	src              []*line
	dead             []bool
	target           []*line
	srcBase, outBase int
	hscrolled        int
}

func (r *reflower) run() {
	for yy, gl := range r.src {
		if r.dead[yy] {
			continue
		}
		width, at := gl.used, gl.used
		w := 0
		for i := range gl.used {
			if w+int(gl.cells[i].Width) > r.sx {
				at = i
				break
			}
			w += int(gl.cells[i].Width)
		}
		switch {
		case width == r.sx:
			r.move(yy)
		case width > r.sx:
			r.split(yy, at)
		case gl.wrapped:
			r.join(yy, width, false)
		default:
			r.move(yy)
		}
	}
}

func (r *reflower) move(yy int) {
	r.target = append(r.target, r.src[yy])
	r.dead[yy] = true
}

// setCell writes c at x of l, growing the row if needed.
func setCell(l *line, x int, c Cell) {
	for len(l.cells) <= x {
		l.cells = append(l.cells, blankCell(0))
	}
	l.cells[x] = c
	l.wrote(x + 1)
}

// join pulls cells from the rows after yy onto it (or onto the last row
// made, when already) until it is sx wide.
func (r *reflower) join(yy, width int, already bool) {
	var gl *line
	var to int
	if !already {
		to = len(r.target)
		gl = r.src[yy]
		r.move(yy)
	} else {
		to = len(r.target) - 1
		gl = r.target[to]
	}
	at := gl.used
	lines, want := 0, 0
	wrapped := true
	var from *line
	for {
		if yy+1+lines == len(r.src) {
			break
		}
		next := r.src[yy+1+lines]
		if !next.wrapped {
			wrapped = false
		}
		if next.used == 0 {
			if !wrapped {
				break
			}
			lines++
			continue
		}
		c := next.cells[0]
		if width+int(c.Width) > r.sx {
			break
		}
		width += int(c.Width)
		setCell(gl, at, c)
		at++
		from = next
		for want = 1; want < from.used; want++ {
			c := from.cells[want]
			if width+int(c.Width) > r.sx {
				break
			}
			width += int(c.Width)
			setCell(gl, at, c)
			at++
		}
		lines++
		if !wrapped || want != from.used || width == r.sx {
			break
		}
	}
	if lines == 0 {
		return
	}
	left := 0
	if from != nil {
		left = from.used - want
	}
	if left != 0 {
		copy(from.cells, from.cells[want:from.used])
		from.cells = from.cells[:left]
		from.used, from.hidden = left, 0
		lines--
	} else if !wrapped {
		gl.wrapped = false
	}
	for i := yy + 1; i < yy+1+lines; i++ {
		r.dead[i] = true
	}
	if gto := r.outBase + to; r.hscrolled > gto+lines {
		r.hscrolled -= lines
	} else if r.hscrolled > gto {
		r.hscrolled = gto
	}
}

// split cuts row yy, wider than sx, into rows of at most sx.
func (r *reflower) split(yy, at int) {
	gl := r.src[yy]
	used, wrapped := gl.used, gl.wrapped
	var pieces []*line
	cur := &line{}
	width := 0
	for i := at; i < used; i++ {
		c := gl.cells[i]
		if width+int(c.Width) > r.sx {
			cur.wrapped = true
			pieces = append(pieces, cur)
			cur = &line{}
			width = 0
		}
		width += int(c.Width)
		setCell(cur, len(cur.cells), c)
	}
	pieces = append(pieces, cur)
	if wrapped {
		cur.wrapped = true
	}
	gl.cells = gl.cells[:at]
	gl.used, gl.hidden = at, 0
	gl.wrapped = true
	r.target = append(r.target, gl)
	r.target = append(r.target, pieces...)
	r.dead[yy] = true
	if r.srcBase+yy <= r.hscrolled {
		r.hscrolled += len(pieces)
	}
	if width < r.sx && wrapped {
		r.join(yy, width, true)
	}
}
