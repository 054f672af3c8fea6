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

// RowsDelta is how next differs from prev, rows of one screen: the rows
// moved up by shift (row shift of prev is row 0 of next, the rows below
// shifted in blank), then the rows changed, in order. A scroll of one
// line is a shift of one and one changed row, where comparing row by row
// finds every row changed. The shift is taken only when it leaves fewer
// rows to send. prev and next have the same length.
func RowsDelta(prev, next []string) (shift int, changed []int) {
	count := func(k int) int {
		n := 0
		for i := range next {
			if i+k >= len(prev) || next[i] != prev[i+k] {
				n++
			}
		}
		return n
	}
	best := count(0)
	if best > 1 {
		// A row's strings are the same in memory when the writer
		// reused them (RowCache), so the candidates are cheap to find.
		tried := 0
		for k := 1; k < len(prev) && tried < 3; k++ {
			if prev[k] != next[0] {
				continue
			}
			tried++
			if n := count(k); n < best {
				best, shift = n, k
			}
		}
	}
	for i := range next {
		if i+shift >= len(prev) || next[i] != prev[i+shift] {
			changed = append(changed, i)
		}
	}
	return shift, changed
}

// ShiftRows moves rows up by shift in place, blanking the rows shifted
// in ("" until a change sets them), as RowsDelta describes.
func ShiftRows(rows []string, shift int) {
	if shift <= 0 {
		return
	}
	n := copy(rows, rows[min(shift, len(rows)):])
	clear(rows[n:])
}
