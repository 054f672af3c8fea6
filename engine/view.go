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
	// render is f's rows joined, made when first asked for
	render      string
	renderValid bool
	// the last scrollback read, reused while the screen is unchanged
	sbVersion uint64
	sbN       int
	sb        []string
}

var (
	_ session.View      = (*paneView)(nil)
	_ session.RowWriter = (*paneView)(nil)
)

func (v *paneView) set(f paneFrame) {
	v.mu.Lock()
	if f.Version >= v.f.Version {
		v.f, v.render, v.renderValid = f, "", false
	}
	v.mu.Unlock()
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
		dst = append(dst, fitRow(l, w))
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

func (v *paneView) Text() string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.f.Text
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
