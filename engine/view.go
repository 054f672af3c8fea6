package engine

import (
	"strings"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// paneView is a session.View of the newest screen the engine pushed.
type paneView struct {
	cl      *Client
	id      task.ID
	session string

	mu sync.RWMutex
	f  paneFrame
	// render is f's rows joined, and text their plain text (when the
	// frame carried none), each made when first asked for
	render      string
	renderValid bool
	text        string
	textValid   bool
	// the last scrollback read, reused while the screen is unchanged
	sbVersion uint64
	sbN       int
	sb        []string
}

var (
	_ session.View      = (*paneView)(nil)
	_ session.RowWriter = (*paneView)(nil)
)

// set takes a pushed frame. A frame of changed rows (Delta) applies over
// the rows of the frame before, which the engine sent just before it on
// the same connection: it is applied whatever its version, or the rows
// held would no longer be those the next one changes.
func (v *paneView) set(f paneFrame) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if f.Delta {
		lines := make([]string, f.Rows)
		copy(lines, v.f.Lines)
		session.ShiftRows(lines, f.Shift)
		for _, r := range f.Set {
			if r.Y >= 0 && r.Y < len(lines) {
				lines[r.Y] = r.Line
			}
		}
		f.Lines, f.Set, f.Delta, f.Shift = lines, nil, false, 0
		f.Version = max(f.Version, v.f.Version)
	} else if f.Version < v.f.Version {
		return
	}
	v.f, v.render, v.renderValid, v.text, v.textValid = f, "", false, "", false
}

// AppendRows appends rows from..from+n-1 of the pushed screen, each w
// columns wide: as they came when w is the screen's width, the usual case
// since the pty follows the pane; cut or padded otherwise (a resize on
// its way).
func (v *paneView) AppendRows(dst []string, from, n, w int) []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for y := from; y < from+n; y++ {
		l := ""
		if y >= 0 && y < len(v.f.Lines) {
			l = v.f.Lines[y]
			if w == v.f.Cols {
				dst = append(dst, l)
				continue
			}
		}
		dst = append(dst, session.FitRow(l, w))
	}
	return dst
}

func (v *paneView) Size() (int, int) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.f.Cols, v.f.Rows
}

func (v *paneView) Render() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.renderValid {
		v.render, v.renderValid = strings.Join(v.f.Lines, "\n"), true
	}
	return v.render
}

// Text is the text the frame carried (an engine older than
// watchReq.Rows sends it), else the rows' plain text.
func (v *paneView) Text() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.f.Text != "" {
		return v.f.Text
	}
	if !v.textValid {
		v.text, v.textValid = session.RowsText(v.f.Lines), true
	}
	return v.text
}

func (v *paneView) Cursor() (int, int, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.f.X, v.f.Y, v.f.Cursor
}

func (v *paneView) Title() string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.f.Title
}

func (v *paneView) Version() uint64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.f.Version
}

// Scrollback asks the engine (scroll mode is rare; the history is large),
// and reuses the answer while the screen has not changed.
func (v *paneView) Scrollback(n int) []string {
	v.mu.RLock()
	ver := v.f.Version
	if v.sb != nil && v.sbVersion == ver && v.sbN == n {
		sb := v.sb
		v.mu.RUnlock()
		return sb
	}
	v.mu.RUnlock()
	sb := v.cl.scrollback(v.id, n)
	v.mu.Lock()
	v.sb, v.sbVersion, v.sbN = sb, ver, n
	v.mu.Unlock()
	return sb
}
