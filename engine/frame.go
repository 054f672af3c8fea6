package engine

import (
	"strings"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// frameOf captures a view's current screen, with its plain text when
// withText (a client that does not take it from the rows), reading the
// rows through rc (nil: each read whole).
func frameOf(id task.ID, sessionID string, v session.View, withText bool, rc *session.RowCache) paneFrame {
	cols, rows := v.Size()
	x, y, vis := v.Cursor()
	// The version is read first: if the screen changes while it is read,
	// the next frame carries a higher version and is drawn again.
	ver := v.Version()
	f := paneFrame{
		Task: id, Session: sessionID, Cols: cols, Rows: rows,
		Lines: screenRows(v, cols, rows, rc), X: x, Y: y, Cursor: vis,
		Title: v.Title(), Version: ver,
	}
	if withText {
		f.Text = v.Text()
	}
	return f
}

// screenRows returns the view's rows, each exactly cols wide: written so
// by the emulator where the view offers it (session.RowWriter), else cut
// from its rendered screen here, once per frame, rather than by every
// console at every draw. Through rc only the rows whose cells changed
// since its last read are written again.
func screenRows(v session.View, cols, rows int, rc *session.RowCache) []string {
	if rc != nil {
		return rc.Rows(v, make([]string, 0, rows), cols, rows)
	}
	if rw, ok := v.(session.RowWriter); ok {
		return rw.AppendRows(make([]string, 0, rows), 0, rows, cols)
	}
	lines := strings.Split(v.Render(), "\n")
	out := make([]string, rows)
	for i := range out {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		out[i] = session.FitRow(l, cols)
	}
	return out
}
