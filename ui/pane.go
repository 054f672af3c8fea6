package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// scrollbackLines is how much history scroll mode asks a pane for.
const scrollbackLines = 2000

// paneCacheEntry is a pane's fitted screen, valid while the session, its
// screen version and the drawn size stay the same. Rendering an emulator
// costs far more than the rest of a frame, so a frame redraws only changed
// panes. The view itself is part of the key: the cache is per task, and
// each new session of the task counts its versions from zero again, so a
// version alone would, once the new session's count reached the old one's,
// show the previous phase's screen under the new phase's name.
type paneCacheEntry struct {
	view    session.View
	version uint64
	w, h    int
	marked  bool
	lines   []string
}

// paneLines returns the task's live screen fitted to w×h, from the cache
// when nothing changed.
func (m *Model) paneLines(id task.ID, w, h int) []string {
	v, ok := m.eng.Pane(id)
	if !ok {
		return block([]string{m.st.dim.Render(m.noPane(id))}, w, h)
	}
	ver := v.Version()
	// A pane whose pty another console sized ([pane] size) is shown at
	// the pty's size, cut or padded, and marked so.
	vc, vr := v.Size()
	took, sized := m.paneTook[id]
	marked := sized && took.asked == [2]int{w, h} && (vc != w || vr != h)
	if c, ok := m.paneCache[id]; ok && c.view == v && c.version == ver && c.w == w && c.h == h && c.marked == marked {
		return c.lines
	}
	lines := fitScreen(v, w, h)
	if marked && h > 0 {
		lines[h-1] = markOtherSize(lines[h-1], vc, vr, w, m.st.focus.Render)
	}
	m.paneCache[id] = paneCacheEntry{view: v, version: ver, w: w, h: h, marked: marked, lines: lines}
	return lines
}

// markOtherSize ends a pane's last row with the size another console gave
// its pty.
func markOtherSize(line string, cols, rows, w int, style func(...string) string) string {
	mark := fmt.Sprintf(" pty %dx%d · sized by another console ", cols, rows)
	if ansi.StringWidth(mark) > w-4 {
		mark = fmt.Sprintf(" pty %dx%d ", cols, rows)
	}
	mw := ansi.StringWidth(mark)
	if mw > w {
		return line
	}
	return ansi.Truncate(line, w-mw, "") + ansi.ResetStyle + style(mark)
}

// noPane says why a live task has no screen to show: a leased task's
// session is still being prepared (worktree, baseline tests, launch).
func (m *Model) noPane(id task.ID) string {
	for _, tv := range m.snap.Tasks {
		if tv.Task.ID == id && tv.Task.State == task.StateLeased {
			return "starting a session for phase " + string(tv.Task.Phase) + "…"
		}
		if tv.Task.ID == id && tv.Gate {
			return "phase " + string(tv.Task.Phase) + " finished · the verify gate is re-running " + tv.Task.Verify + "…"
		}
	}
	return "no live session"
}

// fitScreen crops a screen to w×h. When the emulator is taller than the
// pane (before a resize lands) it keeps the cursor's row in view, since that
// is where an agent is working.
func fitScreen(v session.View, w, h int) []string {
	if rw, ok := v.(session.RowWriter); ok {
		// The session's emulator writes its rows at the pane's width
		// directly, without rendering the whole screen to parse it back.
		_, n := v.Size()
		return rw.AppendRows(make([]string, 0, h), paneTop(v, n, h), h, w)
	}
	rows := strings.Split(v.Render(), "\n")
	start := paneTop(v, len(rows), h)
	out := make([]string, h)
	for i := range out {
		if start+i < len(rows) {
			out[i] = fitRaw(rows[start+i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return out
}

// paneTop is the first of n screen rows to show in h rows: the top, or
// when the screen is taller, enough to keep the cursor's row in view.
func paneTop(v session.View, n, h int) int {
	if n <= h {
		return 0
	}
	_, cy, _ := v.Cursor()
	if cy < h {
		return 0
	}
	return min(cy-h+1, n-h)
}

// scrollLines shows the pane's history and screen as one scrollable text,
// scrollOff lines up from the bottom.
func (m *Model) scrollLines(id task.ID, w, h int) []string {
	v, ok := m.eng.Pane(id)
	if !ok {
		return block([]string{m.st.dim.Render("no live session")}, w, h)
	}
	all := append(v.Scrollback(scrollbackLines), strings.Split(v.Render(), "\n")...)
	m.scrollOff = max(0, min(m.scrollOff, len(all)-h))
	end := len(all) - m.scrollOff
	start := max(0, end-h)
	out := make([]string, 0, h)
	for _, l := range all[start:end] {
		out = append(out, fitRaw(l, w))
	}
	return block(out, w, h)
}

// renderLive is the Live tab: the selected session's screen, its history in
// scroll mode, or why there is nothing to show.
func (m *Model) renderLive(tv coord.TaskView, ok bool, w, h int) []string {
	if !ok {
		return block(nil, w, h)
	}
	if !isLive(tv) {
		msg := "no live session · the task is " + string(tv.Task.State)
		if ls := m.lastScreen(tv.Task.ID); ls != nil && h > 1 {
			return lastScreenLines(m.st.dim.Render("the task is "+string(tv.Task.State)+" · its last session ended ("+sessionEnd(ls)+") on this screen"), ls, w, h)
		}
		lines := []string{m.st.dim.Render(msg)}
		if f := limitFlag(tv, m.now()); f != "" {
			// The header cuts the flag to a line; here it is whole (a
			// program to install, the reason it waits).
			lines = append(lines, "")
			for _, l := range wrap("⚑ "+ansiSafe(f), w) {
				lines = append(lines, m.st.warn.Render(l))
			}
		}
		return block(lines, w, h)
	}
	if m.mode == modeScroll {
		return m.scrollLines(tv.Task.ID, w, h)
	}
	return m.paneLines(tv.Task.ID, w, h)
}

// lastScreen is the selected task's last session's final screen, when the
// engine could replay it from the recording.
func (m *Model) lastScreen(id task.ID) *coord.LastScreen {
	if m.detailID != id {
		return nil
	}
	return m.detail.LastScreen
}

// sessionEnd says how a session ended: "exit 0", "exit 129, hangup",
// "killed".
func sessionEnd(ls *coord.LastScreen) string {
	if ls.Status == store.SessionExited {
		return coord.ExitText(ls.ExitCode)
	}
	return string(ls.Status)
}

// lastScreenLines is a title row over the screen an ended session left,
// its blank bottom rows dropped; when it is taller than the pane, its
// bottom rows show, where an agent's last words are.
func lastScreenLines(title string, ls *coord.LastScreen, w, h int) []string {
	rows := strings.Split(ls.Screen, "\n")
	for len(rows) > 0 && strings.TrimSpace(ansi.Strip(rows[len(rows)-1])) == "" {
		rows = rows[:len(rows)-1]
	}
	rows = rows[max(0, len(rows)-(h-1)):]
	out := make([]string, 0, h)
	out = append(out, title)
	for _, r := range rows {
		out = append(out, fitRaw(r, w))
	}
	return block(out, w, h)
}

// renderGrid draws several live panes at once, each under a title row; the
// selected one's title is highlighted and it is the one focus types into.
func (m *Model) renderGrid(l layout) []string {
	tasks := m.gridTasks()
	out := make([]string, 0, l.bodyH)
	if len(tasks) == 0 {
		return block([]string{m.st.dim.Render("grid · no live sessions")}, m.width, l.bodyH)
	}
	sep := m.st.sep.Render("│")
	for r := 0; r < l.gridRows; r++ {
		cells := make([][]string, l.gridCols)
		for c := 0; c < l.gridCols; c++ {
			i := r*l.gridCols + c
			if i >= len(tasks) {
				cells[c] = block(nil, l.cellW, l.cellH)
				continue
			}
			tv := tasks[i]
			title := m.gridTitle(tv, l.cellW)
			switch {
			case tv.Task.ID == m.selID:
				title = m.st.tabActive.Render(title)
			case tv.Flag != "":
				// A pane that needs the operator stands out in the grid.
				title = m.st.focus.Render(title)
			default:
				title = m.st.tabIdle.Render(title)
			}
			cells[c] = append([]string{title}, m.paneLines(tv.Task.ID, l.cellW, l.cellH-1)...)
		}
		for y := 0; y < l.cellH; y++ {
			var b strings.Builder
			for c := range cells {
				if c > 0 {
					b.WriteString(sep)
				}
				b.WriteString(cells[c][y])
			}
			out = append(out, b.String())
		}
	}
	return block(out, m.width, l.bodyH)
}

// gridTitle is a grid cell's title: what a grid is for is seeing at a
// glance which pane needs you, so the flag, the lease clock and the
// verdict are kept on the right and the task's title gives way first.
func (m *Model) gridTitle(tv coord.TaskView, w int) string {
	name := tv.Task.ID.Short() + " " + tv.Task.Title
	var marks []string
	if tv.Flag != "" {
		marks = append(marks, "⚑ "+tv.Flag)
	}
	lease := ""
	if tv.Lease != nil {
		lease = "lease " + clock(m.leaseClocks(*tv.Lease).remaining)
	}
	verdict := verdictWord(tv.Verdict)
	wide := append(append([]string(nil), marks...), name)
	right := []string{string(tv.Task.Phase)}
	if lease != "" {
		right = append(right, lease)
	}
	right = append(right, verdict)
	r := " " + strings.Join(right, " · ") + " "
	if room := w - ansi.StringWidth(r); room >= 16 {
		return padRight(" "+strings.Join(wide, " · "), room) + r
	}
	// Narrow: the marks first, then the task, whose title gives way.
	if lease != "" {
		marks = append(marks, lease)
	}
	marks = append(marks, verdict, name)
	return fit(" "+strings.Join(marks, " · "), w)
}

// verdictWord is the verdict in a glyph and a word, for a grid title.
func verdictWord(v *verify.Verdict) string {
	if v == nil {
		return "no verdict"
	}
	switch v.Status {
	case verify.StatusOK:
		return "✓ green"
	case verify.StatusIncomplete:
		return "✗ red"
	case verify.StatusError:
		return "! error"
	}
	return verdictGlyph(v) + " " + string(v.Status)
}
