package session

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
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
