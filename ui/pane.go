package ui

import (
	"fmt"
	"strings"
	"syscall"
	"time"

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

// paneGrid draws the agents' panes: the selected one in the Live tab, its
// history in scroll mode, several at once in grid mode. It keeps each
// pane's fitted screen and the sizes asked of the engine for it.
type paneGrid struct {
	st   styles
	pane func(task.ID) (session.View, bool) // the engine's screens
	// paneSizes is the last size asked of the engine per pane; paneTook
	// is the engine's answer to it, from an engine that sizes panes per
	// console (coord.PaneSizer): a pane whose pty has another size was
	// sized by another console.
	paneSizes map[task.ID]paneSize
	paneTook  map[task.ID]resizeDoneMsg
	resizer   *resizer
	paneCache map[task.ID]paneCacheEntry
	scrollOff int // lines above the bottom in scroll mode
	now       func() time.Time
}

func newPaneGrid(st styles, pane func(task.ID) (session.View, bool), now func() time.Time) paneGrid {
	return paneGrid{st: st, pane: pane, now: now, paneSizes: map[task.ID]paneSize{}, paneTook: map[task.ID]resizeDoneMsg{},
		resizer: newResizer(), paneCache: map[task.ID]paneCacheEntry{}}
}

// lines returns the task's live screen fitted to w×h, from the cache when
// nothing changed; tasks are the snapshot's, which say why a task has no
// screen.
func (pg *paneGrid) lines(tasks []coord.TaskView, id task.ID, w, h int) []string {
	v, ok := pg.pane(id)
	if !ok {
		return block([]string{pg.st.dim.Render(noPane(tasks, id))}, w, h)
	}
	ver := v.Version()
	// A pane whose pty another console sized ([pane] size) is shown at
	// the pty's size, cut or padded, and marked so.
	vc, vr := v.Size()
	took, sized := pg.paneTook[id]
	marked := sized && took.asked == [2]int{w, h} && (vc != w || vr != h)
	if c, ok := pg.paneCache[id]; ok && c.view == v && c.version == ver && c.w == w && c.h == h && c.marked == marked {
		return c.lines
	}
	lines := fitScreen(v, w, h)
	if marked && h > 0 {
		lines[h-1] = markOtherSize(lines[h-1], vc, vr, w, pg.st.focus.Render)
	}
	pg.paneCache[id] = paneCacheEntry{view: v, version: ver, w: w, h: h, marked: marked, lines: lines}
	return lines
}

// markOtherSize ends a pane's last row with the size another console gave
// its pty.
func markOtherSize(line string, cols, rows, w int, style func(...string) string) string {
	return markSize(line, fmt.Sprintf(" pty %dx%d · sized by another console ", cols, rows), fmt.Sprintf(" pty %dx%d ", cols, rows), w, style)
}

// markSize ends a screen's last row with mark, or short when mark leaves
// the row less than 4 cells, or nothing when even short does not fit: the
// screen is shown at a size other than the pane's, cut or padded.
func markSize(line, mark, short string, w int, style func(...string) string) string {
	if ansi.StringWidth(mark) > w-4 {
		mark = short
	}
	mw := ansi.StringWidth(mark)
	if mw > w {
		return line
	}
	return ansi.Truncate(line, w-mw, "") + ansi.ResetStyle + style(mark)
}

// noPane says why a live task has no screen to show: a leased task's
// session is still being prepared (worktree, baseline tests, launch).
func noPane(tasks []coord.TaskView, id task.ID) string {
	for _, tv := range tasks {
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

// scroll shows the pane's history and screen as one scrollable text,
// scrollOff lines up from the bottom.
func (pg *paneGrid) scroll(id task.ID, w, h int) []string {
	v, ok := pg.pane(id)
	if !ok {
		return block([]string{pg.st.dim.Render("no live session")}, w, h)
	}
	all := append(v.Scrollback(scrollbackLines), strings.Split(v.Render(), "\n")...)
	pg.scrollOff = max(0, min(pg.scrollOff, len(all)-h))
	end := len(all) - pg.scrollOff
	start := max(0, end-h)
	out := make([]string, 0, h)
	for _, l := range all[start:end] {
		out = append(out, fitRaw(l, w))
	}
	return block(out, w, h)
}

// live is the Live tab: the selected session's screen, its history in
// scroll mode (scrolling), or why there is nothing to show; ls is the
// task's last session's final screen (nil when there is none) and tasks
// are the snapshot's.
func (pg *paneGrid) live(tv coord.TaskView, ok bool, ls *coord.LastScreen, scrolling bool, tasks []coord.TaskView, w, h int) []string {
	if !ok {
		return block(nil, w, h)
	}
	if !isLive(tv) {
		msg := "no live session · the task is " + string(tv.Task.State)
		if ls != nil && h > 1 {
			return lastScreenLines(pg.st.dim.Render("the task is "+string(tv.Task.State)+" · its last session "+sessionEnd(ls)+" on this screen"), ls, w, h)
		}
		lines := []string{pg.st.dim.Render(msg)}
		if f := limitFlag(tv, pg.now()); f != "" {
			// The header cuts the flag to a line; here it is whole (a
			// program to install, the reason it waits).
			lines = append(lines, "")
			for _, l := range wrap("⚑ "+ansiSafe(f), w) {
				lines = append(lines, pg.st.warn.Render(l))
			}
		}
		return block(lines, w, h)
	}
	if scrolling {
		return pg.scroll(tv.Task.ID, w, h)
	}
	return pg.lines(tasks, tv.Task.ID, w, h)
}

// lastScreen is the selected task's last session's final screen, when the
// engine could replay it from the recording.
func (dt *detailTabs) lastScreen(id task.ID) *coord.LastScreen {
	if dt.detailID != id {
		return nil
	}
	return dt.detail.LastScreen
}

// sessionEnd says how a session ended: "ended (exit 0)", "ended
// (killed)", or "was stopped (SIGHUP, exit 129)" when its status is the
// hangup or the terminate a stop begins with: the signal was sent to the
// agent, not its own doing (coord.StopText; the ledger's session.exited
// says who sent it).
func sessionEnd(ls *coord.LastScreen) string {
	if ls.Status != store.SessionExited {
		return "ended (" + string(ls.Status) + ")"
	}
	if sig := ls.ExitCode - 128; sig == int(syscall.SIGHUP) || sig == int(syscall.SIGTERM) {
		return "was stopped (" + coord.StopText(ls.ExitCode) + ")"
	}
	return "ended (" + coord.ExitText(ls.ExitCode) + ")"
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

// gridView is what the grid draws: its cells' tasks, the snapshot's tasks
// (which say why a task has no screen), the selection, the clocks and the
// terminal's width.
type gridView struct {
	cells, all  []coord.TaskView
	sel         task.ID
	snapAt, now time.Time
	width       int
}

// grid draws several live panes at once, each under a title row; the
// selected one's title is highlighted and it is the one focus types into.
func (pg *paneGrid) grid(g gridView, l layout) []string {
	tasks := g.cells
	out := make([]string, 0, l.bodyH)
	if len(tasks) == 0 {
		return block([]string{pg.st.dim.Render("grid · no live sessions")}, g.width, l.bodyH)
	}
	sep := pg.st.sep.Render("│")
	for r := 0; r < l.gridRows; r++ {
		cells := make([][]string, l.gridCols)
		for c := 0; c < l.gridCols; c++ {
			i := r*l.gridCols + c
			if i >= len(tasks) {
				cells[c] = block(nil, l.cellW, l.cellH)
				continue
			}
			tv := tasks[i]
			title := gridTitle(tv, g.snapAt, g.now, l.cellW)
			switch {
			case tv.Task.ID == g.sel:
				title = pg.st.tabActive.Render(title)
			case tv.Flag != "":
				// A pane that needs the operator stands out in the grid.
				title = pg.st.focus.Render(title)
			default:
				title = pg.st.tabIdle.Render(title)
			}
			cells[c] = append([]string{title}, pg.lines(g.all, tv.Task.ID, l.cellW, l.cellH-1)...)
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
	return block(out, g.width, l.bodyH)
}

// minGridTitle is the fewest cells of its title a grid cell's header
// keeps before it cuts the flag.
const minGridTitle = 12

// gridTitle is a grid cell's title: the flag (what a grid is for is seeing
// at a glance which pane needs you), the task's id and title, and on the
// right its phase, lease clock and verdict. When space is short the least
// telling parts go first, whole: the id, then the lease clock (unless it
// is in its last minute), then the phase; then the title is cut, its start
// kept with an ellipsis, down to minGridTitle cells; only then the flag is
// cut.
func gridTitle(tv coord.TaskView, snapAt, now time.Time, w int) string {
	flag := ""
	if tv.Flag != "" {
		flag = "⚑ " + tv.Flag + " · "
	}
	lease, urgent, verdict := "", "", verdictWord(tv.Verdict)
	if tv.Lease != nil {
		left := clocksOf(*tv.Lease, snapAt, now).remaining
		lease = "lease " + clock(left)
		if left < time.Minute {
			urgent, lease = lease, "" // about to run out: kept to the last
			verdict = urgent + " · " + verdict
		}
	}
	id, title := tv.Task.ID.Short()+" ", tv.Task.Title
	for _, keep := range []struct{ id, phase, lease bool }{{true, true, true}, {false, true, true}, {false, true, false}, {false, false, false}} {
		var right []string
		if keep.phase {
			right = append(right, string(tv.Task.Phase))
		}
		if keep.lease && lease != "" {
			right = append(right, lease)
		}
		r := " " + strings.Join(append(right, verdict), " · ") + " "
		left := " " + flag + title
		if keep.id {
			left = " " + flag + id + title
		}
		if room := w - ansi.StringWidth(r); ansi.StringWidth(left) <= room {
			return padRight(left, room) + r
		}
	}
	// Still too long: the title gives way, then the flag. "no verdict"
	// goes with the phase: it says nothing that needs you.
	if tv.Verdict == nil {
		verdict = urgent
	}
	r := " " + verdict + " "
	if verdict == "" {
		r = " "
	}
	room := w - ansi.StringWidth(r) - 1
	if tr := room - ansi.StringWidth(flag); tr >= minGridTitle {
		return " " + flag + padRight(title, tr) + r
	}
	if fr := room - minGridTitle - 3; flag != "" && fr >= 6 {
		return " " + padRight("⚑ "+tv.Flag, fr) + " · " + padRight(title, minGridTitle) + r
	}
	return padRight(" "+flag+title, w)
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
