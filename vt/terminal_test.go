package vt

import (
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
)

// TestClaudeCodeTitleDoesNotLeak is upstream charmbracelet/x#848: the
// UTF-8 of "✳" holds the byte 0x9C, which a parser that honours C1 ST
// inside a string takes as the end of the title, printing the rest.
func TestClaudeCodeTitleDoesNotLeak(t *testing.T) {
	data := []byte("\x1b]0;✳ Claude Code\x07❯ \x1b]2;✳ Claude Code\x1b\\")
	for cut := range data {
		term := New(40, 3, 10, nil)
		_, _ = term.Write(data[:cut])
		_, _ = term.Write(data[cut:])
		if got := strings.TrimSpace(term.Text()); got != "❯" {
			t.Fatalf("split at %d: screen %q, want only the prompt", cut, got)
		}
		if term.Title() != "✳ Claude Code" {
			t.Fatalf("split at %d: title %q", cut, term.Title())
		}
	}
}

// TestModesReachTheInputSide: what the program asks of its input (bracketed
// paste, mouse reports, application cursor keys) is readable by whoever
// writes to it.
func TestModesReachTheInputSide(t *testing.T) {
	term := New(20, 3, 10, nil)
	_, _ = term.Write([]byte("\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?1h\x1b=\x1b[?1004h"))
	want := Modes{BracketedPaste: true, AppCursor: true, AppKeypad: true, FocusEvents: true, Mouse: 1002, MouseEncoding: 1006}
	if got := term.Modes(); got != want {
		t.Fatalf("modes %+v, want %+v", got, want)
	}
	_, _ = term.Write([]byte("\x1b[?2004l\x1b[?1002l\x1b[?1006l\x1b[?1l\x1b>\x1b[?1004l"))
	if got := term.Modes(); got != (Modes{}) {
		t.Fatalf("modes after reset %+v", got)
	}
}

// TestRepliesToQueries: cursor position and device attributes are answered
// on the reply callback, in order.
func TestRepliesToQueries(t *testing.T) {
	var got []string
	term := New(20, 5, 10, func(b []byte) { got = append(got, string(b)) })
	_, _ = term.Write([]byte("\x1b[3;7H\x1b[6n\x1b[c\x1b[5n"))
	want := []string{"\x1b[3;7R", "\x1b[?1;2c", "\x1b[0n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("replies %q, want %q", got, want)
	}
}

// TestUnterminatedStringIsBounded: a program that opens an OSC string and
// never ends it cannot make the terminal hold more than maxStringLen.
func TestUnterminatedStringIsBounded(t *testing.T) {
	term := New(20, 3, 10, nil)
	_, _ = term.Write([]byte("\x1b]0;"))
	chunk := []byte(strings.Repeat("x", 4096))
	for range 100 {
		_, _ = term.Write(chunk)
	}
	if len(term.in.strBuf) > maxStringLen {
		t.Fatalf("string buffer grew to %d bytes", len(term.in.strBuf))
	}
	_, _ = term.Write([]byte("\x07visible"))
	if !strings.HasPrefix(term.Text(), "visible") {
		t.Fatalf("screen after the string: %q", term.Text())
	}
}

// TestDrawPaintsCells: Draw puts the screen into a cell buffer cell for
// cell (content, width, style), blanks a wide character the area cuts, and
// clears what the screen does not cover.
func TestDrawPaintsCells(t *testing.T) {
	term := New(12, 3, 10, nil)
	_, _ = term.Write([]byte("\x1b[1;38;2;10;20;30mab\x1b[0m日本\x1b[44mxy\x1b[0m\r\nsecond 語"))
	buf := uv.NewScreenBuffer(14, 4)
	for y := range 4 {
		for x := range 14 {
			buf.SetCell(x, y, &uv.Cell{Content: "#", Width: 1})
		}
	}
	term.Draw(buf, uv.Rect(1, 1, 11, 3))
	for y := range 2 {
		for x := range 11 {
			text, w, st := term.CellAt(x, y)
			c := buf.CellAt(1+x, 1+y)
			if w == 0 {
				continue // the right half belongs to the wide cell before it
			}
			if x == 10 && w == 2 {
				text, w, st = " ", 1, Style{} // cut by the area's edge
			}
			want := term.styles.uvStyle(term.styles.intern(st))
			if c.Content != text || c.Width != w || !c.Style.Equal(want) {
				t.Fatalf("cell (%d,%d) = %q w%d %v, want %q w%d %v", x, y, c.Content, c.Width, c.Style, text, w, *want)
			}
		}
	}
	if c := buf.CellAt(0, 1); c.Content != "#" {
		t.Fatalf("Draw wrote outside its area: %q", c.Content)
	}
	if c := buf.CellAt(5, 3); c.Content != " " {
		t.Fatalf("row 3 of the area (the screen's last row) = %q", c.Content)
	}
}
