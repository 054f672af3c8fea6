package vt

import (
	"strings"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
)

// asciiStr holds one-byte strings for printable ASCII, so drawing a cell
// allocates nothing.
var asciiStr = func() (s [128]string) {
	for i := range s {
		s[i] = string(rune(i))
	}
	return
}()

// Size returns the columns and rows.
func (t *Terminal) Size() (cols, rows int) { return t.cols, t.rows }

// Cursor returns the cursor position (the column is at most cols-1 even
// while a wrap is pending) and whether it is visible.
func (t *Terminal) Cursor() (x, y int, visible bool) {
	return min(t.cur.x, t.cols-1), t.cur.y, !t.cursorHidden
}

// Title returns the window title set with OSC 0 or 2.
func (t *Terminal) Title() string { return t.in.title }

// Modes returns the input modes the program set.
func (t *Terminal) Modes() Modes { return t.modes }

// AltScreen reports whether the alternate screen is in use.
func (t *Terminal) AltScreen() bool { return t.scr == t.alt }

// Version grows with every write and resize.
func (t *Terminal) Version() uint64 { return t.version }

// HistoryLen is the number of lines in the scrollback.
func (t *Terminal) HistoryLen() int { return t.hist.len() }

// SetHistory changes how many lines of scrollback are kept.
func (t *Terminal) SetHistory(n int) { t.hist.setLimit(n) }

// CellAt returns the cell at column x, row y of the screen: its text (""
// for the right half of a wide character), width and style.
func (t *Terminal) CellAt(x, y int) (text string, width int, st Style) {
	c := t.scr.line(y).cells[x]
	return t.glyphs.text(c), int(c.Width), t.styles.list[c.Style]
}

// Draw paints the screen's top-left corner into area of scr, cell by cell,
// with no ANSI in between: it makes the terminal an ultraviolet Drawable.
func (t *Terminal) Draw(scr uv.Screen, area uv.Rectangle) {
	w, h := min(area.Dx(), t.cols), min(area.Dy(), t.rows)
	var uc uv.Cell
	for y := range h {
		cells := t.scr.line(y).cells
		for x := 0; x < w; x++ {
			c := cells[x]
			if c.Width == 0 && c.R == 0 {
				continue
			}
			if c.Width == 2 && x == w-1 {
				c = blankCell(0) // a wide character cut by the area's edge
			}
			uc = uv.Cell{Content: t.glyphs.text(c), Width: int(c.Width)}
			if c.Style != 0 {
				uc.Style = *t.styles.uvStyle(c.Style)
			}
			scr.SetCell(area.Min.X+x, area.Min.Y+y, &uc)
		}
		for x := w; x < area.Dx(); x++ {
			scr.SetCell(area.Min.X+x, area.Min.Y+y, &uv.EmptyCell)
		}
	}
	for y := h; y < area.Dy(); y++ {
		for x := 0; x < area.Dx(); x++ {
			scr.SetCell(area.Min.X+x, area.Min.Y+y, &uv.EmptyCell)
		}
	}
}

// AppendRow appends screen row y as ANSI text exactly w columns wide
// (cut or padded with blanks), ending in a style reset when styled. It is
// how a string-built frame takes a pane without parsing the pane back.
func (t *Terminal) AppendRow(dst []byte, y, w int) []byte {
	if y < 0 || y >= t.rows {
		return t.appendCells(dst, nil, w, true)
	}
	return t.appendCells(dst, t.scr.line(y).cells, w, true)
}

func (t *Terminal) appendCells(dst []byte, cells []Cell, w int, pad bool) []byte {
	cur := uint32(0)
	x := 0
	for ; x < w && x < len(cells); x++ {
		c := cells[x]
		if c.Width == 0 && c.R == 0 {
			continue
		}
		if c.Width == 2 && x == w-1 {
			c = blankCell(0)
		}
		if c.Style != cur {
			dst = appendSGR(dst, t.styles.list[c.Style])
			cur = c.Style
		}
		switch {
		case c.R < 0:
			dst = append(dst, t.glyphs.clusters[-c.R-1]...)
		case c.R < utf8.RuneSelf:
			dst = append(dst, byte(c.R))
		default:
			dst = utf8.AppendRune(dst, c.R)
		}
	}
	if cur != 0 {
		dst = append(dst, "\x1b[m"...)
	}
	if pad {
		for ; x < w; x++ {
			dst = append(dst, ' ')
		}
	}
	return dst
}

// Render returns the screen as ANSI text, one line per row joined by "\n".
func (t *Terminal) Render() string {
	var b []byte
	for y := range t.rows {
		if y > 0 {
			b = append(b, '\n')
		}
		b = t.AppendRow(b, y, t.cols)
	}
	return string(b)
}

// Text returns the screen as plain text, one line per row, each without
// its trailing blanks.
func (t *Terminal) Text() string {
	var b strings.Builder
	for y := range t.rows {
		if y > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(t.glyphs.rowText(t.scr.line(y).cells), " "))
	}
	return b.String()
}

// Scrollback returns up to n of the newest history lines, oldest first, as
// ANSI text without trailing blanks.
func (t *Terminal) Scrollback(n int) []string {
	n = min(n, t.hist.len())
	if n <= 0 {
		return nil
	}
	out := make([]string, n)
	scratch := &line{cells: make([]Cell, t.cols)}
	for i := range out {
		e := t.hist.ent(t.hist.len() - n + i)
		scratch.cells = scratch.cells[:0]
		t.hist.each(e, t.glyphs.clusters, func(c Cell, w int) {
			scratch.cells = append(scratch.cells, c)
			if w == 2 {
				scratch.cells = append(scratch.cells, Cell{Style: c.Style})
			}
		})
		out[i] = string(t.appendCells(nil, scratch.cells, len(scratch.cells), false))
	}
	return out
}
