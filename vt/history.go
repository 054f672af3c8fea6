package vt

import "unicode/utf8"

// histLine is a line that scrolled off the top, stored compactly: its text
// as UTF-8 (trailing blanks dropped) and its styles as runs, not as cells.
// A 120-column line of agent prose costs its bytes plus a few runs instead
// of 120 cell structs.
type histLine struct {
	text    []byte
	runs    []run
	wrapped bool
}

// run is a stretch of a history line's text in one style.
type run struct {
	style uint32
	bytes uint32
}

// history is a ring of at most limit lines. When it is full the oldest
// line's buffers are reused for the newest, so a steady flood allocates
// nothing.
type history struct {
	lines []histLine
	start int // index of the oldest line
	n     int
	limit int
}

func (h *history) len() int { return h.n }

// at returns line i, 0 being the oldest.
func (h *history) at(i int) *histLine {
	j := h.start + i
	if j >= len(h.lines) {
		j -= len(h.lines)
	}
	return &h.lines[j]
}

// push appends a line encoded from cells and returns it.
func (h *history) push(l *line, clusters []string) {
	if h.limit <= 0 {
		return
	}
	var hl *histLine
	switch {
	case h.n < len(h.lines):
		hl = h.at(h.n)
		h.n++
	case h.n < h.limit:
		h.lines = append(h.lines, histLine{})
		hl = &h.lines[len(h.lines)-1]
		h.n++
	default:
		hl = &h.lines[h.start]
		h.start++
		if h.start == len(h.lines) {
			h.start = 0
		}
	}
	hl.encode(l, clusters)
}

// pop removes and decodes the newest line into l (a resize pulling
// history back onto the screen).
func (h *history) pop(l *line, clusters []string) bool {
	if h.n == 0 {
		return false
	}
	h.n--
	h.at(h.n).decode(l, clusters)
	return true
}

func (h *history) setLimit(n int) {
	if n < 0 {
		n = 0
	}
	if n < h.n {
		// Keep the newest n lines.
		kept := make([]histLine, n)
		for i := range kept {
			kept[i] = *h.at(h.n - n + i)
		}
		h.lines, h.start, h.n = kept, 0, n
	} else if len(h.lines) > 0 && h.start != 0 {
		// Unrotate so growing by append stays in order.
		kept := make([]histLine, h.n)
		for i := range kept {
			kept[i] = *h.at(i)
		}
		h.lines, h.start = kept, 0
	}
	h.limit = n
}

func (hl *histLine) encode(l *line, clusters []string) {
	hl.text, hl.runs, hl.wrapped = hl.text[:0], hl.runs[:0], l.wrapped
	end := len(l.cells)
	for end > 0 && l.cells[end-1] == blankCell(0) {
		end--
	}
	for _, c := range l.cells[:end] {
		if c.Width == 0 && c.R == 0 {
			continue // right half of a wide character
		}
		before := len(hl.text)
		switch {
		case c.R < 0:
			hl.text = append(hl.text, clusters[-c.R-1]...)
		case c.R < utf8.RuneSelf:
			hl.text = append(hl.text, byte(c.R))
		default:
			hl.text = utf8.AppendRune(hl.text, c.R)
		}
		n := uint32(len(hl.text) - before)
		if k := len(hl.runs); k > 0 && hl.runs[k-1].style == c.Style {
			hl.runs[k-1].bytes += n
		} else {
			hl.runs = append(hl.runs, run{style: c.Style, bytes: n})
		}
	}
}

// decode writes the line back into cells (padding with blanks).
func (hl *histLine) decode(l *line, clusters []string) {
	l.wrapped = hl.wrapped
	x := 0
	hl.each(clusters, func(c Cell, w int) {
		if x+w > len(l.cells) {
			return
		}
		l.cells[x] = c
		if w == 2 {
			l.cells[x+1] = Cell{Style: c.Style}
		}
		x += w
	})
	l.clear(min(x, len(l.cells)), len(l.cells), blankCell(0))
}

// each calls f for every character cell of the line, in order. Clusters
// are matched by text against the cluster table; a cluster no longer in it
// comes back as its first character.
func (hl *histLine) each(clusters []string, f func(c Cell, w int)) {
	text := hl.text
	for _, r := range hl.runs {
		seg := text[:r.bytes]
		text = text[r.bytes:]
		for len(seg) > 0 {
			ch, size := utf8.DecodeRune(seg)
			w := runeWidth(ch)
			// Combining marks that follow belong to this cell.
			end := size
			for end < len(seg) {
				r2, s2 := utf8.DecodeRune(seg[end:])
				if runeWidth(r2) != 0 {
					break
				}
				end += s2
			}
			c := Cell{R: ch, Style: r.style, Width: uint8(w)}
			if end > size {
				c.R = findCluster(clusters, seg[:end], ch)
			}
			f(c, max(w, 1))
			seg = seg[end:]
		}
	}
}

func findCluster(clusters []string, b []byte, first rune) rune {
	for i, s := range clusters {
		if s == string(b) {
			return rune(-(i + 1))
		}
	}
	return first
}

func (h *history) clear() { h.start, h.n = 0, 0 }
