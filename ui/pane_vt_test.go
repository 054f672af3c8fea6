package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/vt"
)

// viewOnly hides everything but session.View, so fitScreen takes the path
// for views that cannot write rows themselves.
type viewOnly struct{ session.View }

// TestPaneRowsMatchTheRenderedScreen: the session's terminal hands the pane
// its rows at the pane's width without rendering the whole screen and
// parsing it back; the cells the console draws are the same either way,
// for a pane narrower, wider, shorter and taller than the screen.
func TestPaneRowsMatchTheRenderedScreen(t *testing.T) {
	term := session.NewTerminal(120, 40, 0, nil)
	_, _ = term.Write([]byte(busyScreen() + "日本語 at the end\x1b[44m\x1b[K\x1b[0m"))
	for _, size := range [][2]int{{69, 30}, {120, 40}, {150, 45}, {50, 10}} {
		w, h := size[0], size[1]
		fast := fitScreen(term, w, h)
		slow := fitScreen(viewOnly{term}, w, h)
		require.Len(t, fast, h)
		require.Equal(t, cells(t, slow, w, h), cells(t, fast, w, h), "%dx%d", w, h)
	}
}

// cells parses frame lines into a cell buffer, as bubbletea does.
func cells(t *testing.T, lines []string, w, h int) []string {
	t.Helper()
	buf := uv.NewScreenBuffer(w, h)
	for y, l := range lines {
		uv.NewStyledString(l).Draw(buf, uv.Rect(0, y, w, 1))
	}
	out := make([]string, 0, w*h)
	for y := range h {
		for x := range w {
			c := buf.CellAt(x, y)
			if c == nil {
				out = append(out, "<nil>")
				continue
			}
			out = append(out, c.Content+"|"+c.Style.String())
		}
	}
	return out
}

// TestKeysFollowTheProgramsModes: cursor keys in application mode and
// pastes bracketed only for a program that asked for it.
func TestKeysFollowTheProgramsModes(t *testing.T) {
	up := tea.KeyPressMsg{Code: tea.KeyUp}
	require.Equal(t, "\x1b[A", string(keyBytesIn(up, vt.Modes{})))
	require.Equal(t, "\x1bOA", string(keyBytesIn(up, vt.Modes{AppCursor: true})))
	require.Equal(t, "x", string(keyBytesIn(tea.KeyPressMsg{Code: 'x', Text: "x"}, vt.Modes{AppCursor: true})))
	require.Equal(t, "hi\n", string(pasteBytesIn("hi\n", vt.Modes{})))
	require.Equal(t, "\x1b[200~hi\x1b[201~", string(pasteBytesIn("hi", vt.Modes{BracketedPaste: true})))

	term := session.NewTerminal(20, 3, 0, nil)
	_, _ = term.Write([]byte("\x1b[?1h\x1b[?2004h"))
	require.Equal(t, vt.Modes{AppCursor: true, BracketedPaste: true}, term.Modes(), "the session's terminal reports the modes")
}
