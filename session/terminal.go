package session

import (
	"sync"
	"sync/atomic"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/orchestra-tui/orchestra-tui/vt"
)

// terminal is the emulator seam: everything the session needs from a VT
// emulator, so the emulator can be replaced without touching the rest.
type terminal interface {
	View
	// Write feeds program output to the emulator.
	Write(p []byte) (int, error)
	// Resize changes the screen size.
	Resize(cols, rows int)
	// BracketedPaste reports whether the program enabled mode 2004.
	BracketedPaste() bool
	// Close stops the emulator.
	Close() error
}

// vtTerminal is the session's terminal: the vt package's emulator behind a
// lock, so the UI can read the screen while the pty reader writes to it.
//
// Replies to the program's queries (cursor position, device attributes)
// are handed to reply while the lock is held; reply must not block (the
// session's input queue never does).
type vtTerminal = Terminal

// Terminal is a View over the vt emulator that can also be written to:
// the session's own terminal, and what recordings replay into.
type Terminal struct {
	mu      sync.RWMutex
	t       *vt.Terminal
	version atomic.Uint64
}

var (
	_ terminal     = (*vtTerminal)(nil)
	_ uv.Drawable  = (*vtTerminal)(nil)
	_ RowWriter    = (*vtTerminal)(nil)
	_ ModeReporter = (*vtTerminal)(nil)
)

// NewTerminal returns a cols x rows terminal keeping history lines of
// scrollback (0 for vt.DefaultHistory, negative for none) whose replies to
// the program go to reply (nil discards them).
func NewTerminal(cols, rows, history int, reply func([]byte)) *Terminal {
	if history == 0 {
		history = vt.DefaultHistory
	}
	return &Terminal{t: vt.New(cols, rows, history, reply)}
}

func newTerminal(cols, rows, history int, reply func([]byte)) *Terminal {
	return NewTerminal(cols, rows, history, reply)
}

func (t *vtTerminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	n, err := t.t.Write(p)
	t.mu.Unlock()
	t.version.Add(1)
	return n, err
}

func (t *vtTerminal) Resize(cols, rows int) {
	t.mu.Lock()
	t.t.Resize(cols, rows)
	t.mu.Unlock()
	t.version.Add(1)
}

func (t *vtTerminal) BracketedPaste() bool { return t.Modes().BracketedPaste }

// Modes returns the input modes the program set (bracketed paste, mouse
// tracking, application cursor keys).
func (t *vtTerminal) Modes() vt.Modes {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.t.Modes()
}

func (t *vtTerminal) Close() error { return nil }

func (t *vtTerminal) Size() (cols, rows int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.t.Size()
}

func (t *vtTerminal) Render() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.t.Render()
}

func (t *vtTerminal) Text() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.t.Text()
}

func (t *vtTerminal) Cursor() (x, y int, visible bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.t.Cursor()
}

func (t *vtTerminal) Title() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.t.Title()
}

func (t *vtTerminal) Scrollback(n int) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.t.Scrollback(n)
}

func (t *vtTerminal) Version() uint64 { return t.version.Load() }

// Draw paints the screen into a cell buffer with no ANSI in between.
func (t *vtTerminal) Draw(scr uv.Screen, area uv.Rectangle) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	t.t.Draw(scr, area)
}

// AppendRows appends rows from..from+n-1 of the screen, each exactly w
// columns wide, to dst.
func (t *vtTerminal) AppendRows(dst []string, from, n, w int) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var buf []byte
	_, rows := t.t.Size()
	for y := from; y < from+n; y++ {
		if y < 0 || y >= rows {
			dst = append(dst, blankRow(w))
			continue
		}
		buf = t.t.AppendRow(buf[:0], y, w)
		dst = append(dst, string(buf))
	}
	return dst
}

func blankRow(w int) string {
	b := make([]byte, w)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}
