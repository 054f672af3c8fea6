// Package session runs one agent process in a pseudo-terminal, feeds its
// output to a terminal emulator, records it as asciicast v2, and delivers
// input to it.
package session

import "github.com/orchestra-tui/orchestra-tui/vt"

// View is a read-only look at a session's terminal. The UI pulls from it at
// frame time; pty bytes never travel through the UI's message queue. Every
// method is safe to call from any goroutine while the session writes.
type View interface {
	// Size returns the terminal's columns and rows.
	Size() (cols, rows int)
	// Render returns the current screen with its styles as ANSI text, one
	// line per row, joined by "\n".
	Render() string
	// Text returns the current screen as plain text, one line per row.
	Text() string
	// Cursor returns the cursor position and whether it is visible.
	Cursor() (x, y int, visible bool)
	// Title returns the window title the program set, if any.
	Title() string
	// Scrollback returns up to n of the most recent lines that scrolled off
	// the top, oldest first, as ANSI text.
	Scrollback(n int) []string
	// Version grows every time the screen changes, so a caller can tell
	// whether it needs to draw again without comparing screens.
	Version() uint64
}

// RowWriter is what a View offers when it can hand over screen rows
// already cut to a width, so a pane is drawn without rendering the whole
// screen to ANSI and parsing it back. The session's own terminal is one;
// callers fall back to Render for views that are not.
type RowWriter interface {
	// AppendRows appends screen rows from..from+n-1, each exactly w
	// columns wide (cut or padded), as styled text; rows outside the
	// screen are blank.
	AppendRows(dst []string, from, n, w int) []string
}

// ModeReporter is what a View offers when it knows the input modes the
// program set: whether a paste must be bracketed, whether cursor keys are
// sent in application mode, which mouse reports it wants.
type ModeReporter interface {
	Modes() vt.Modes
}
