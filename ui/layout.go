package ui

import (
	"sync"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The smallest terminal the console draws in; below it, it says so.
const (
	minWidth  = 60
	minHeight = 16
)

// layout is the geometry of one frame, computed from the terminal size.
// Update and View both derive it, so the size the engine is asked to give a
// pane is exactly the size the frame draws it in.
type layout struct {
	tooSmall bool
	bodyH    int // rows between the header and the status lines
	side     bool
	listW    int
	listH    int
	rightW   int
	rightH   int
	leaseH   int
	contentH int // rows for the active tab
	// grid mode
	gridCols, gridRows, cellW, cellH int
}

func (m *Model) layout() layout {
	w, h := m.width, m.height
	l := layout{tooSmall: w < minWidth || h < minHeight}
	if l.tooSmall {
		return l
	}
	// The banner takes its rows from the body, so panes are sized to what
	// stays visible.
	l.bodyH = h - 3 - len(m.renderBanner(w))
	if m.grid {
		// Up to 2x2, or 3x2 on a large terminal; fewer live sessions get
		// bigger cells.
		maxCols := 2
		if w >= 150 && h >= 36 {
			maxCols = 3
		}
		n := min(liveCount(m.snap.Tasks), maxCols*2)
		l.gridCols = max(min(n, maxCols), 1)
		l.gridRows = max((n+l.gridCols-1)/l.gridCols, 1)
		l.cellW = (w - (l.gridCols - 1)) / l.gridCols
		l.cellH = l.bodyH / l.gridRows
		return l
	}
	l.side = w >= 110
	if l.side {
		// Wide enough for a readable title, the phase and the state at
		// 120 columns; the rest goes to the agent's pane.
		l.listW = min(max(w*42/100, 46), 76)
		l.listH = l.bodyH
		l.rightW = w - l.listW - 1
		l.rightH = l.bodyH
	} else {
		l.listW = w
		l.listH = min(max(len(m.tasks.visible())+2, 4), l.bodyH/3)
		l.rightW = w
		l.rightH = l.bodyH - l.listH
	}
	l.leaseH = 1
	tv, ok := m.selected()
	switch {
	case l.rightH < 12:
	case m.mode == modeReplay:
		// The replay's strips take the lease strip's rows: under 100
		// columns they have room for their detail line.
		if l.rightW < 100 {
			l.leaseH = 2
		}
	default:
		// The strip wraps to a second line only when its text needs one
		// ("lease · none" never does; a long last decision does, at any
		// width).
		l.leaseH = m.strips().leaseRows(tv, ok, l.rightW, 2)
	}
	if ok {
		l.leaseH += baseCount(m.snap.Bases, tv.Task.ID) // the selected task's trained bases, one line each
	}
	// task header, tab bar, lease strip, verdict strip
	l.contentH = max(l.rightH-3-l.leaseH, 1)
	return l
}

// relayout applies a new terminal size to the scrollable tabs and asks the
// engine to resize panes whose drawn size changed.
func (m *Model) relayout() tea.Cmd {
	l := m.layout()
	m.tabs.size(l)
	for _, f := range m.form.all() {
		f.SetWidth(max(l.rightW-len(f.Prompt)-2, 4))
	}
	m.correct.in.SetWidth(max(m.width-len(m.correct.in.Prompt)-2, 4))
	// Without a width the / line's placeholder shows as its first letter.
	m.tasks.searchIn.SetWidth(max(m.width-len(m.tasks.searchIn.Prompt)-2, 4))
	m.refreshTabs()
	return m.syncPaneSizes()
}

// size gives the scrollable tabs the size layout l draws them in and
// reports whether it changed. The lease strip's height follows the
// selected task (a lease or none, its trained bases), so a new selection
// or a new snapshot can move the tabs' top without the terminal's size
// changing: then the caller fills them again (refreshTabs).
func (dt *detailTabs) size(l layout) bool {
	changed := false
	for _, vp := range []*viewport.Model{&dt.brief, &dt.verdicts, &dt.events} {
		w, h := max(l.rightW, 1), max(l.contentH, 1)
		if vp.Width() != w || vp.Height() != h {
			vp.SetWidth(w)
			vp.SetHeight(h)
			changed = true
		}
	}
	return changed
}

// wantedPanes lists the panes the next frame draws and their sizes.
func (m *Model) wantedPanes() map[task.ID][2]int {
	l := m.layout()
	out := map[task.ID][2]int{}
	if l.tooSmall || m.mode == modeHelp {
		return out
	}
	if m.zoom && m.mode == modeFocus && m.selID != "" { // zoomed: the pane has the whole terminal
		out[m.selID] = [2]int{m.width, m.height - 1}
		return out
	}
	if m.grid {
		for _, tv := range gridTasks(m.snap.Tasks, m.selID, m.width, m.height) {
			out[tv.Task.ID] = [2]int{l.cellW, l.cellH - 1}
		}
		return out
	}
	if m.tab == tabLive && m.selID != "" {
		if tv, ok := m.selected(); ok && isLive(tv) {
			out[m.selID] = [2]int{l.rightW, l.contentH}
		}
	}
	return out
}

// syncPaneSizes asks the engine, off the update loop, to resize every drawn
// pane whose size differs from what was last asked.
func (m *Model) syncPaneSizes() tea.Cmd {
	var cmds []tea.Cmd
	for id, sz := range m.wantedPanes() {
		// A new session of the same task starts at the size last asked
		// for the task, but the console asks again per session anyway:
		// the engine may have been restarted in between.
		want := paneSize{session: sessionOf(m.snap.Tasks, id), size: sz}
		if m.panes.paneSizes[id] == want || sz[0] < 1 || sz[1] < 1 {
			continue
		}
		m.panes.paneSizes[id] = want
		cmds = append(cmds, m.panes.resizer.ask(m.eng, id, sz))
	}
	return tea.Batch(cmds...)
}

// resizer sends pane sizes to the engine in the order they were asked.
// tea.Cmds run on goroutines of their own, in no set order, so each one
// sends the newest size asked for its pane when it runs, not the size it
// was made with: whichever runs last, the engine ends with the newest.
type resizer struct {
	mu   sync.Mutex // held across the engine call, so sends never overtake
	want map[task.ID][2]int
}

func newResizer() *resizer { return &resizer{want: map[task.ID][2]int{}} }

func (r *resizer) ask(e coord.Engine, id task.ID, sz [2]int) tea.Cmd {
	r.mu.Lock()
	r.want[id] = sz
	r.mu.Unlock()
	return func() tea.Msg {
		r.mu.Lock()
		defer r.mu.Unlock()
		sz := r.want[id]
		if ps, ok := e.(coord.PaneSizer); ok {
			cols, rows, err := ps.SizePane(id, sz[0], sz[1])
			return resizeDoneMsg{id: id, asked: sz, took: [2]int{cols, rows}, sized: err == nil, err: err}
		}
		if err := e.ResizePane(id, sz[0], sz[1]); err != nil {
			return resizeDoneMsg{err: err}
		}
		return resizeDoneMsg{}
	}
}

// focus tells an engine that sizes panes per console that this console's
// operator is at the task's pane, so its pty takes this console's size
// ([pane] size = "latest"); in the order of the sizes asked before it.
func (r *resizer) focus(e coord.Engine, id task.ID) tea.Cmd {
	if _, ok := e.(coord.PaneSizer); !ok {
		return nil
	}
	return func() tea.Msg {
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := e.Input(id, nil); err != nil {
			return resizeDoneMsg{err: err}
		}
		return nil
	}
}

// gridTasks are the live tasks grid mode shows, at most one grid's worth,
// chosen so the selection is among them.
// tasks are the snapshot's, sel the selection, w×h the terminal's size.
func gridTasks(tasks []coord.TaskView, sel task.ID, w, h int) []coord.TaskView {
	n := 4
	if w >= 150 && h >= 36 {
		n = 6
	}
	var live []coord.TaskView
	selIdx := -1
	for _, tv := range tasks {
		if isLive(tv) {
			if tv.Task.ID == sel {
				selIdx = len(live)
			}
			live = append(live, tv)
		}
	}
	start := 0
	if selIdx >= n {
		start = selIdx - n + 1
	}
	return live[start:min(len(live), start+n)]
}

// paneSize is the size last asked of one session's pane.
type paneSize struct {
	session string
	size    [2]int
}

// sessionOf is the session of task id among tasks.
func sessionOf(tasks []coord.TaskView, id task.ID) string {
	for _, tv := range tasks {
		if tv.Task.ID == id {
			return tv.SessionID
		}
	}
	return ""
}
