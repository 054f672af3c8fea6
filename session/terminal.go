package session

import (
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
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
	// Close stops the emulator and its reply pump.
	Close() error
}

// vtTerminal is the terminal backed by charmbracelet/x/vt's SafeEmulator.
//
// The emulator answers queries (cursor position, device attributes) by
// writing to its own input pipe, and its Write blocks until someone reads
// that pipe. So a pump goroutine always drains it and hands the replies to
// the session's input path; without it a program that asks for the cursor
// position would freeze the session.
//
// mu makes composite reads (screen text plus scrollback, which x/vt hands
// out as shared slices) consistent with writes; single calls would be safe
// with the SafeEmulator's own lock alone.
type vtTerminal struct {
	mu      sync.RWMutex
	emu     *vt.SafeEmulator
	version atomic.Uint64
	// Set from the emulator's callbacks, which run under its write lock:
	// they only store values.
	title   atomic.Pointer[string]
	bracket atomic.Bool
	pumped  chan struct{}
}

// newTerminal returns a cols x rows terminal whose replies to the program
// go to reply (called from a goroutine of its own; nil discards them).
func newTerminal(cols, rows int, reply func([]byte)) *vtTerminal {
	t := &vtTerminal{emu: vt.NewSafeEmulator(cols, rows), pumped: make(chan struct{})}
	empty := ""
	t.title.Store(&empty)
	t.emu.SetCallbacks(vt.Callbacks{
		Title: func(s string) { t.title.Store(&s) },
		EnableMode: func(m ansi.Mode) {
			if m == ansi.ModeBracketedPaste {
				t.bracket.Store(true)
			}
		},
		DisableMode: func(m ansi.Mode) {
			if m == ansi.ModeBracketedPaste {
				t.bracket.Store(false)
			}
		},
	})
	go t.pump(reply)
	return t
}

// pump drains the emulator's replies until the emulator is closed.
func (t *vtTerminal) pump(reply func([]byte)) {
	defer close(t.pumped)
	buf := make([]byte, 4096)
	for {
		n, err := t.emu.Read(buf)
		if n > 0 && reply != nil {
			reply(append([]byte(nil), buf[:n]...))
		}
		if err != nil {
			return
		}
	}
}

func (t *vtTerminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	n, err := t.emu.Write(p)
	t.mu.Unlock()
	t.version.Add(1)
	return n, err
}

func (t *vtTerminal) Resize(cols, rows int) {
	t.mu.Lock()
	t.emu.Resize(cols, rows)
	t.mu.Unlock()
	t.version.Add(1)
}

func (t *vtTerminal) BracketedPaste() bool { return t.bracket.Load() }

// Close ends the reply pump by closing the emulator's input pipe. It does
// not call the emulator's own Close, which writes a flag that Read reads
// without a lock.
func (t *vtTerminal) Close() error {
	var err error
	if pw, ok := t.emu.InputPipe().(*io.PipeWriter); ok {
		err = pw.Close()
	}
	<-t.pumped
	return err
}

func (t *vtTerminal) Size() (cols, rows int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.emu.Width(), t.emu.Height()
}

func (t *vtTerminal) Render() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.emu.Render()
}

func (t *vtTerminal) Text() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	// String trims each line's trailing blanks and keeps one line per row.
	return t.emu.Emulator.String()
}

func (t *vtTerminal) Cursor() (x, y int, visible bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	p := t.emu.CursorPosition()
	return p.X, p.Y, !t.emu.CursorHidden()
}

func (t *vtTerminal) Title() string { return *t.title.Load() }

func (t *vtTerminal) Scrollback(n int) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if n <= 0 {
		return nil
	}
	lines := t.emu.Emulator.Scrollback().Lines()
	if n < len(lines) {
		lines = lines[len(lines)-n:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l.Render(), " ")
	}
	return out
}

func (t *vtTerminal) Version() uint64 { return t.version.Load() }
