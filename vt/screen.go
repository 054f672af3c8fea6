package vt

// Cell is one character cell of the screen.
//
// R is the character. A negative R is -(i+1) for grapheme cluster i of the
// terminal's cluster table, for a character followed by combining marks. R
// is 0 in the right half of a wide character (width 0 there). Style is an
// interned style id.
type Cell struct {
	R     rune
	Style uint32
	Width uint8
}

// blankCell is an erased cell in style id st (its background shows).
func blankCell(st uint32) Cell { return Cell{R: ' ', Style: st, Width: 1} }

// line is one row of cells; wrapped says the text continues on the next row
// because it reached the right margin. used is how many cells from the left
// were written since the row was last emptied, spaces included (tmux's
// cellused): a reflow carries that much of the row, so a prompt padded
// with written spaces re-wraps as in tmux.
type line struct {
	cells   []Cell
	used    int
	wrapped bool
	// hidden, when past len(cells), is how far the cells kept beyond a
	// margin that moved left reach in cells' backing array.
	hidden int
}

// held is the line's cells, those beyond the margin included.
func (l *line) held() []Cell { return l.cells[:max(len(l.cells), l.hidden)] }

// empty blanks the whole row in c and forgets what was written on it.
func (l *line) empty(c Cell) {
	l.clear(0, len(l.cells), c)
	l.used = 0
	l.wrapped = false
	l.hidden = 0
}

// wrote records that cells up to end (exclusive) were written.
func (l *line) wrote(end int) {
	if end > l.used {
		l.used = end
	}
}

func (l *line) clear(from, to int, c Cell) {
	cs := l.cells[from:to]
	if len(cs) == 0 {
		return
	}
	// Doubling copies run as memmove: a scroll clears a whole row.
	cs[0] = c
	for n := 1; n < len(cs); n *= 2 {
		copy(cs[n:], cs[:n])
	}
}

// fixWide blanks the halves of wide characters that writing w cells at x
// would split.
func (l *line) fixWide(x, w int) {
	if l.cells[x].Width == 0 && x > 0 && l.cells[x-1].Width == 2 {
		l.cells[x-1] = blankCell(0)
	}
	if end := x + w - 1; end < len(l.cells) && l.cells[end].Width == 2 && end+1 < len(l.cells) {
		l.cells[end+1] = blankCell(0)
	}
}

// insertCells is ICH on a cols-wide row: n blanks b at column x push the
// rest of the row right, off its end.
func (l *line) insertCells(x, n, cols int, b Cell) {
	n = min(n, cols-x)
	// Only a wide character the cursor splits (its right half under the
	// cursor) is broken; one that starts at the cursor moves whole.
	if l.cells[x].Width == 0 && x > 0 && l.cells[x-1].Width == 2 {
		l.cells[x-1] = blankCell(0)
	}
	copy(l.cells[x+n:], l.cells[x:])
	l.clear(x, x+n, b)
	if l.cells[cols-1].Width == 2 {
		l.cells[cols-1] = blankCell(0)
	}
	if x < cols-1 {
		l.wrote(cols) // tmux counts the moved rest of the row as written
	}
}

// deleteCells is DCH on a cols-wide row: n cells at column x go, the rest
// of the row moves left and blanks b come in at its end.
func (l *line) deleteCells(x, n, cols int, b Cell) {
	n = min(n, cols-x)
	l.fixWide(x, n)
	copy(l.cells[x:], l.cells[x+n:])
	l.clear(cols-n, cols, b)
	if cols-x-n > 0 {
		l.wrote(cols - n)
	}
}

// screen is a grid of rows kept as a ring: scrolling the whole screen moves
// the ring's start, so no cell and no line is copied. Scrolling a region
// moves line pointers only.
type screen struct {
	cols, rows int
	ring       []*line
	top        int // ring index of row 0
}

func newScreen(cols, rows int) *screen {
	s := &screen{cols: cols, rows: rows, ring: make([]*line, rows)}
	for i := range s.ring {
		s.ring[i] = newLine(cols)
	}
	return s
}

func newLine(cols int) *line {
	l := &line{cells: make([]Cell, cols)}
	l.clear(0, cols, blankCell(0))
	return l
}

// line returns row y (0 is the top).
func (s *screen) line(y int) *line {
	i := s.top + y
	if i >= s.rows {
		i -= s.rows
	}
	return s.ring[i]
}

func (s *screen) setLine(y int, l *line) {
	i := s.top + y
	if i >= s.rows {
		i -= s.rows
	}
	s.ring[i] = l
}

// scrollUp moves rows top..bottom (inclusive) up by n, filling the bottom
// with blank rows in c. evict, when not nil, takes each row leaving the top
// before it is reused.
func (s *screen) scrollUp(top, bottom, n int, c Cell, evict func(*line)) {
	h := bottom - top + 1
	n = min(n, h)
	if n <= 0 {
		return
	}
	if top == 0 && bottom == s.rows-1 {
		// The whole screen: rotate the ring.
		for range n {
			l := s.ring[s.top]
			if evict != nil {
				evict(l)
			}
			l.empty(c)
			s.top++
			if s.top == s.rows {
				s.top = 0
			}
		}
		return
	}
	var tmp [8]*line
	gone := tmp[:0]
	for y := top; y < top+n; y++ {
		l := s.line(y)
		if evict != nil {
			evict(l)
		}
		gone = append(gone, l)
	}
	for y := top; y+n <= bottom; y++ {
		s.setLine(y, s.line(y+n))
	}
	for i, l := range gone {
		l.empty(c)
		s.setLine(bottom-n+1+i, l)
	}
}

// scrollDown moves rows top..bottom down by n, filling the top with blanks.
func (s *screen) scrollDown(top, bottom, n int, c Cell) {
	h := bottom - top + 1
	n = min(n, h)
	if n <= 0 {
		return
	}
	var tmp [8]*line
	gone := tmp[:0]
	for y := bottom - n + 1; y <= bottom; y++ {
		gone = append(gone, s.line(y))
	}
	for y := bottom; y-n >= top; y-- {
		s.setLine(y, s.line(y-n))
	}
	for i, l := range gone {
		l.empty(c)
		s.setLine(top+i, l)
	}
}

// resizeCols changes every row's width, cutting or padding with blanks.
func (s *screen) resizeCols(cols int) {
	for _, l := range s.ring {
		resizeLine(l, cols)
	}
	s.cols = cols
}

func resizeLine(l *line, cols int) {
	// Cells past a narrower margin are kept out of sight, as tmux keeps
	// them, and come back when the screen widens again.
	held := max(len(l.cells), l.hidden)
	full := l.cells[:cap(l.cells)]
	if cols > len(full) {
		full = append(full, make([]Cell, cols-len(full))...)
	}
	l.cells = full[:cols]
	if cols > held {
		l.clear(held, cols, blankCell(0))
	}
	l.hidden = 0
	if held > cols {
		l.hidden = held
	}
}

// rowsInOrder returns the rows top to bottom, unrotating the ring.
func (s *screen) rowsInOrder() []*line {
	out := make([]*line, s.rows)
	for y := range out {
		out[y] = s.line(y)
	}
	return out
}

// setRows replaces the rows, top to bottom.
func (s *screen) setRows(ls []*line) {
	s.ring, s.top, s.rows = ls, 0, len(ls)
}
