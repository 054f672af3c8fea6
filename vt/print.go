package vt

import "unicode/utf8"

// decGraphics is DEC special graphics (line drawing) for 0x5f-0x7e, the
// characters behind "ESC ( 0" box drawing.
var decGraphics = [32]rune{
	' ', '◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼',
	'⎺', '⎻', '─', '⎼', '⎽', '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
}

// printASCII prints a run of printable ASCII: the common case, kept free of
// per-character width lookups and parser calls.
func (t *Terminal) printASCII(b []byte) {
	if t.insert || t.cur.charset[t.cur.gl] == '0' {
		for _, c := range b {
			t.printRune(rune(c))
		}
		return
	}
	st := t.cur.styleID
	for len(b) > 0 {
		if t.cur.x >= t.cols {
			if !t.autowrap {
				t.cur.x = t.cols - 1
				t.put(rune(b[len(b)-1]), 1)
				return
			}
			t.wrap()
		}
		l := t.scr.line(t.cur.y)
		n := min(len(b), t.cols-t.cur.x)
		x := t.cur.x
		cells := l.cells[x : x+n]
		// Overwriting part of a wide character blanks its other half.
		if cells[0].Width == 0 || cells[n-1].Width == 2 || (x+n < t.cols && l.cells[x+n].Width == 0) {
			for i := range n {
				l.fixWide(x+i, 1)
			}
		}
		for i, c := range b[:n] {
			cells[i] = Cell{R: rune(c), Style: st, Width: 1}
		}
		l.wrote(x + n)
		t.cur.x += n
		t.lastRune = rune(b[n-1])
		b = b[n:]
		t.atMargin = 0
		if t.cur.x == t.cols && !t.autowrap {
			t.cur.x = t.cols - 1
			t.atMargin = t.cur.y + 1
		}
	}
}

// wrap moves to the start of the next line, marking this one as continued.
func (t *Terminal) wrap() {
	t.scr.line(t.cur.y).wrapped = true
	t.linefeed()
	t.cur.x = 0
}

// printRune prints one character of any width.
func (t *Terminal) printRune(r rune) {
	if t.cur.charset[t.cur.gl] == '0' && r >= 0x5f && r <= 0x7e {
		r = decGraphics[r-0x5f]
	}
	w := runeWidth(r)
	if w == 0 {
		t.combine(r)
		return
	}
	if w > t.cols {
		return
	}
	if t.cur.x+w > t.cols {
		if t.autowrap {
			t.wrap()
		} else if w > 1 && t.cur.x >= t.cols-1 {
			// Without autowrap a wide character that no longer fits is
			// dropped, as in xterm.
			return
		} else {
			t.cur.x = t.cols - w
		}
	}
	t.put(r, w)
	t.lastRune = r
}

// put writes a character of width w at the cursor and advances it.
func (t *Terminal) put(r rune, w int) {
	l := t.scr.line(t.cur.y)
	x := t.cur.x
	if t.insert {
		copy(l.cells[x+w:], l.cells[x:])
		if c := l.cells[t.cols-1]; c.Width == 2 {
			l.cells[t.cols-1] = blankCell(0)
		}
		l.wrote(t.cols) // tmux moves the rest of the row: all of it counts as written
	}
	l.fixWide(x, w)
	l.cells[x] = Cell{R: r, Style: t.cur.styleID, Width: uint8(w)}
	if w == 2 {
		l.cells[x+1] = Cell{Style: t.cur.styleID}
	}
	l.wrote(x + w)
	t.cur.x += w
	t.atMargin = 0
	if t.cur.x == t.cols && !t.autowrap {
		t.cur.x = t.cols - 1
		t.atMargin = t.cur.y + 1
	}
}

// combine appends a zero-width character (a combining mark, a variation
// selector, a joiner) to the character before the cursor, as tmux does.
func (t *Terminal) combine(r rune) {
	x := min(t.cur.x, t.cols) - 1
	if !t.autowrap && t.atMargin == t.cur.y+1 && t.cur.x == t.cols-1 {
		x = t.cols - 1 // the character printed last is under the cursor
	}
	if x < 0 {
		return
	}
	l := t.scr.line(t.cur.y)
	if l.cells[x].Width == 0 && l.cells[x].R == 0 && x > 0 {
		x--
	}
	c := &l.cells[x]
	var buf [64]byte
	b := buf[:0]
	if c.R < 0 {
		b = append(b, t.glyphs.clusters[-c.R-1]...)
	} else {
		b = utf8.AppendRune(b, c.R)
	}
	if len(b)+utf8.RuneLen(r) > 32 {
		return
	}
	b = utf8.AppendRune(b, r)
	c.R = t.glyphs.intern(b)
}
