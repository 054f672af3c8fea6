package session

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/vt"
)

// FitRow cuts or pads styled text to exactly w columns, ending any style.
// A view that holds rows of one width hands them to a pane of another
// width (a resize on its way) through it.
func FitRow(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "")
		sw = ansi.StringWidth(s)
	}
	if strings.IndexByte(s, 0x1b) >= 0 {
		s += "\x1b[m"
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// RowsText is the plain text of styled rows as the emulator's own Text
// gives it: each row without its styles and trailing blanks, joined by
// "\n". A view that was handed rows (not the emulator) answers Text with
// it, so the plain text need not travel beside the rows.
func RowsText(rows []string) string {
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		if strings.IndexByte(r, 0x1b) >= 0 {
			r = ansi.Strip(r)
		}
		b.WriteString(strings.TrimRight(r, " "))
	}
	return b.String()
}

// RowCache is one reader's memory of the rows it last read from a view,
// so reading the whole screen once per change writes only the rows that
// changed (vt.RowCache): a session host reads its screen so for each
// change notice it pushes. A view that is not the session's Terminal is
// read through RowWriter or Render, each time whole.
type RowCache struct {
	vt vt.RowCache
}

// Rows appends the view's rows, each exactly cols wide.
func (c *RowCache) Rows(v View, dst []string, cols, rows int) []string {
	t, ok := v.(*Terminal)
	if !ok {
		if rw, ok := v.(RowWriter); ok {
			return rw.AppendRows(dst, 0, rows, cols)
		}
		lines := strings.Split(v.Render(), "\n")
		for i := range rows {
			l := ""
			if i < len(lines) {
				l = lines[i]
			}
			dst = append(dst, FitRow(l, cols))
		}
		return dst
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return c.vt.AppendRows(t.t, dst, 0, rows, cols)
}
