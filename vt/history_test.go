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
