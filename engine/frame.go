package engine

import (
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// frameOf captures a view's current screen.
func frameOf(id task.ID, sessionID string, v session.View) paneFrame {
	cols, rows := v.Size()
	x, y, vis := v.Cursor()
	// The version is read first: if the screen changes while it is read,
	// the next frame carries a higher version and is drawn again.
	ver := v.Version()
	return paneFrame{
		Task: id, Session: sessionID, Cols: cols, Rows: rows,
		Render: v.Render(), Text: v.Text(), X: x, Y: y, Cursor: vis,
		Title: v.Title(), Version: ver,
	}
}
