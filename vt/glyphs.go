package vt

import "unicode/utf8"

// glyphs is the terminal's table of what its cells show beyond a rune: the
// grapheme clusters (a character with combining marks), which a cell names
// by a negative R, and the strings made for runes, kept so drawing a cell
// allocates nothing.
type glyphs struct {
	clusters []string
	ids      map[string]rune
	runeStr  map[rune]string
}

func newGlyphs() glyphs {
	return glyphs{ids: make(map[string]rune), runeStr: make(map[rune]string)}
}

// intern interns a grapheme cluster and returns its cell rune.
func (g *glyphs) intern(b []byte) rune {
	if id, ok := g.ids[string(b)]; ok {
		return id
	}
	s := string(b)
	g.clusters = append(g.clusters, s)
	id := rune(-len(g.clusters))
	g.ids[s] = id
	return id
}

// text is what cell c shows: "" for the right half of a wide character.
func (g *glyphs) text(c Cell) string {
	switch {
	case c.R < 0:
		return g.clusters[-c.R-1]
	case c.R == 0:
		return ""
	case c.R < utf8.RuneSelf:
		return asciiStr[c.R]
	}
	s, ok := g.runeStr[c.R]
	if !ok {
		s = string(c.R)
		g.runeStr[c.R] = s
	}
	return s
}

// rowText is cells as plain text, the halves of wide characters skipped.
func (g *glyphs) rowText(cells []Cell) string {
	var b []byte
	for _, c := range cells {
		switch {
		case c.Width == 0 && c.R == 0:
		case c.R < 0:
			b = append(b, g.clusters[-c.R-1]...)
		default:
			b = utf8.AppendRune(b, c.R)
		}
	}
	return string(b)
}

// tabStops are the columns with a tab stop.
type tabStops []bool

// reset puts a stop every eight columns of a cols-wide screen.
func (ts *tabStops) reset(cols int) {
	*ts = make([]bool, cols)
	for x := 8; x < cols; x += 8 {
		(*ts)[x] = true
	}
}

// next is where a cursor in column x lands after moving to the n-th next
// tab stop (backwards for negative n) of a cols-wide screen. A cursor in
// the last column, or waiting to wrap there, stays put going forward.
func (ts tabStops) next(x, n, cols int) int {
	if n > 0 && x >= cols-1 {
		return x
	}
	x = min(x, cols-1)
	for ; n > 0 && x < cols-1; n-- {
		x++
		for x < cols-1 && !ts[x] {
			x++
		}
	}
	for ; n < 0 && x > 0; n++ {
		x--
		for x > 0 && !ts[x] {
			x--
		}
	}
	return x
}
