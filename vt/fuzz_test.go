package vt

import (
	"fmt"
	"strings"
	"testing"

	xvt "github.com/charmbracelet/x/vt"
)

// FuzzTerminal feeds arbitrary bytes, cut into arbitrary writes, and checks
// that nothing panics and the screen stays well formed. For input made of
// printable ASCII, CR and LF only (short of the margin), where every
// emulator must agree, the
// text must equal charmbracelet/x/vt's, the second reference.
//
//	go test ./vt -run '^$' -fuzz FuzzTerminal -fuzztime 1m
func FuzzTerminal(f *testing.F) {
	for _, tc := range torture {
		f.Add([]byte(tc.data), uint8(3))
	}
	f.Add([]byte("\x1b]0;\xe2\x9c\xb3 Claude Code\x07"), uint8(1))
	f.Add([]byte("\x1b[2;5r\x1b[?6h\x1b[99L\x1b[99M\x1b[99@\x1b[99P"), uint8(2))
	f.Add([]byte("abc\r\ndef\nghi\r\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		for _, size := range [][2]int{{1, 1}, {7, 3}, {20, 5}} {
			term := New(size[0], size[1], 50, func([]byte) {})
			chunk := int(split)%9 + 1
			for off := 0; off < len(data); off += chunk {
				_, _ = term.Write(data[off:min(off+chunk, len(data))])
			}
			checkInvariants(t, term)
			term.Resize(size[0]+3, size[1]+2)
			checkInvariants(t, term)
			term.Resize(max(size[0]-1, 1), max(size[1]-1, 1))
			checkInvariants(t, term)
			_ = term.Render()
			_ = term.Scrollback(100)
		}
		// Byte-at-a-time writes never take the fast CSI path; whole writes
		// do: the screens must be the same.
		whole, bytewise := New(20, 5, 50, func([]byte) {}), New(20, 5, 50, func([]byte) {})
		_, _ = whole.Write(data)
		feed(bytewise, data, 1)
		if a, b := whole.Render(), bytewise.Render(); a != b {
			t.Fatalf("one write and byte-by-byte writes of %q differ:\n%s\n---\n%s", data, a, b)
		}
		if plainASCII(data) {
			ours := New(20, 5, 50, nil)
			_, _ = ours.Write(data)
			ref := xvt.NewEmulator(20, 5)
			_, _ = ref.Write(data)
			if a, b := trimLines(ours.Text()), trimLines(ref.String()); a != b {
				t.Fatalf("screens differ from x/vt for %q:\nours:\n%s\nx/vt:\n%s", data, a, b)
			}
		}
	})
}

// plainASCII reports whether b is printable ASCII, CR and LF that never
// reaches the right margin of 20 columns: tmux and xterm (x/vt) differ on
// whether a line feed cancels a pending wrap, and tmux is our reference.
func plainASCII(b []byte) bool {
	col := 0
	for _, c := range b {
		switch {
		case c == '\r':
			col = 0
		case c == '\n':
		case c < 0x20 || c >= 0x7f:
			return false
		default:
			col++
			if col >= 20 {
				return false
			}
		}
	}
	return true
}

func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}

// checkInvariants fails when the screen is malformed: cursor out of
// range, rows of the wrong width, a wide character without its right half.
func checkInvariants(t *testing.T, term *Terminal) {
	t.Helper()
	// On the alternate screen a narrowing resize leaves the column where
	// it was, past the margin too, as tmux does (the less cast checks it):
	// the next character wraps or a move brings it back.
	maxX := term.cols
	if term.scr == term.alt {
		maxX = max(maxX, term.cur.x)
	}
	if term.cur.x < 0 || term.cur.x > maxX || term.cur.y < 0 || term.cur.y >= term.rows {
		t.Fatalf("cursor (%d,%d) outside %dx%d", term.cur.x, term.cur.y, term.cols, term.rows)
	}
	if term.top < 0 || term.bottom >= term.rows || term.top >= term.bottom && term.rows > 1 {
		t.Fatalf("scroll region %d..%d in %d rows", term.top, term.bottom, term.rows)
	}
	for y := range term.rows {
		cells := term.scr.line(y).cells
		if len(cells) != term.cols {
			t.Fatalf("row %d has %d cells, want %d", y, len(cells), term.cols)
		}
		for x, c := range cells {
			switch {
			case c.Width == 2 && (x+1 >= len(cells) || cells[x+1].Width != 0 || cells[x+1].R != 0):
				t.Fatalf("row %d: wide character at %d without its right half: %s", y, x, dump(cells))
			case c.Width == 0 && (x == 0 || cells[x-1].Width != 2):
				t.Fatalf("row %d: right half at %d without a wide character: %s", y, x, dump(cells))
			case c.R < 0 && int(-c.R-1) >= len(term.glyphs.clusters):
				t.Fatalf("row %d: cluster %d out of range", y, -c.R-1)
			}
		}
	}
	if n := len(strings.Split(term.Text(), "\n")); n != term.rows {
		t.Fatalf("Text has %d lines, want %d", n, term.rows)
	}
}

func dump(cells []Cell) string {
	var b strings.Builder
	for _, c := range cells {
		fmt.Fprintf(&b, "[%q w%d]", c.R, c.Width)
	}
	return b.String()
}
