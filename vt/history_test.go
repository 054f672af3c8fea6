package vt

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestHistoryKeepsTheNewestLinesExactly pushes far more lines than the
// limit, of random lengths (so the byte ring wraps and grows), and reads
// every kept line back: text, styles, wide characters and combining marks.
func TestHistoryKeepsTheNewestLinesExactly(t *testing.T) {
	const limit = 500
	term := New(40, 5, limit, nil)
	r := rand.New(rand.NewSource(1))
	var want []string
	for i := range 3000 {
		var b strings.Builder
		fmt.Fprintf(&b, "%d:", i)
		for range r.Intn(12) {
			switch r.Intn(4) {
			case 0:
				b.WriteString("\x1b[31mred\x1b[0m")
			case 1:
				b.WriteString("日本")
			case 2:
				b.WriteString("e\u0301")
			default:
				b.WriteString(" plain")
			}
		}
		line := b.String()
		if ansi.StringWidth(line) > 40 {
			line = ansi.Truncate(line, 40, "")
		}
		_, _ = term.Write([]byte(line + "\r\n"))
		want = append(want, ansi.Strip(line))
	}
	if term.HistoryLen() != limit {
		t.Fatalf("history holds %d lines, want %d", term.HistoryLen(), limit)
	}
	got := term.Scrollback(limit)
	// The screen holds the last 4 lines plus the empty cursor line.
	want = want[len(want)-4-limit : len(want)-4]
	for i := range got {
		if g := strings.TrimRight(ansi.Strip(got[i]), " "); g != strings.TrimRight(want[i], " ") {
			t.Fatalf("history line %d = %q, want %q", i, g, want[i])
		}
	}
	if !strings.Contains(strings.Join(got, "\n"), "\x1b[0;31mred") {
		t.Fatal("history lost the styles")
	}
}

// TestResizeKeepsTheBottom shrinks a screen whose cursor is at the bottom:
// the top rows go to history (tmux's rule), and growing brings them back.
func TestResizeKeepsTheBottom(t *testing.T) {
	term := New(20, 6, 100, nil)
	for i := range 6 {
		fmt.Fprintf(term, "row %d", i)
		if i < 5 {
			_, _ = term.Write([]byte("\r\n"))
		}
	}
	term.Resize(20, 3)
	if got := term.Text(); got != "row 3\nrow 4\nrow 5" {
		t.Fatalf("after shrinking: %q", got)
	}
	if _, y, _ := term.Cursor(); y != 2 {
		t.Fatalf("cursor row %d, want 2", y)
	}
	term.Resize(20, 6)
	if got := term.Text(); got != "row 0\nrow 1\nrow 2\nrow 3\nrow 4\nrow 5" {
		t.Fatalf("after growing: %q", got)
	}
	// With the cursor high up, blank rows below it go first.
	term = New(20, 6, 100, nil)
	_, _ = term.Write([]byte("top\r\nsecond"))
	term.Resize(20, 3)
	if got := term.Text(); got != "top\nsecond\n" {
		t.Fatalf("shrinking with the cursor at the top: %q", got)
	}
}

// TestStyleTableStaysBounded: a program painting every line in a new
// 24-bit colour does not grow the style table without end, and the screen
// and history keep their colours through the compactions.
func TestStyleTableStaysBounded(t *testing.T) {
	term := New(30, 5, 200, nil)
	for i := range 50000 {
		fmt.Fprintf(term, "\x1b[38;2;%d;%d;%dmline %d\x1b[0m\r\n", i>>16&0xff, i>>8&0xff, i&0xff, i)
	}
	if n := len(term.styles.list); n > 2*minStyleLimit {
		t.Fatalf("style table holds %d styles", n)
	}
	// The newest history line is line 49995 (the screen holds the last
	// four and the cursor's empty row).
	last := term.Scrollback(1)[0]
	if want := "\x1b[0;38;2;0;195;75mline 49995"; !strings.HasPrefix(last, want) {
		t.Fatalf("newest history line %q, want it to start %q", last, want)
	}
	row := string(term.AppendRow(nil, 3, 30))
	if want := "\x1b[0;38;2;0;195;79mline 49999"; !strings.HasPrefix(row, want) {
		t.Fatalf("screen row 3 %q, want it to start %q", row, want)
	}
}

// The line index grows by doubling but never past the limit: at the
// default 10,000 lines, no array of 16,384 entries is kept for them.
func TestTheHistoryIndexStopsAtTheLimit(t *testing.T) {
	term := New(20, 3, DefaultHistory, nil)
	for i := range DefaultHistory + 500 {
		_, _ = fmt.Fprintf(term, "line %d\r\n", i)
	}
	if got := term.hist.len(); got != DefaultHistory {
		t.Fatalf("history holds %d lines, want %d", got, DefaultHistory)
	}
	if got := cap(term.hist.ents); got > DefaultHistory {
		t.Fatalf("the history's line index has room for %d entries, for a limit of %d", got, DefaultHistory)
	}
}
