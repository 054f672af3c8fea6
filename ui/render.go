package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// render draws the whole frame: exactly height lines of exactly width cells.
func (m *Model) render() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	l := m.layout()
	if l.tooSmall {
		msg := fmt.Sprintf("terminal too small: need at least %dx%d, have %dx%d", minWidth, minHeight, w, h)
		return strings.Join(block(wrap(msg, w), w, h), "\n")
	}
	if m.mode == modeHelp {
		return strings.Join(helpScreen{st: m.st, groups: m.keys.helpGroups()}.render(w, h), "\n")
	}
	if m.zoom && m.mode == modeFocus && m.selID != "" {
		// Focus mode zoomed, as tmux's z: the agent's pane on every row
		// but the last, which names the task and says how to leave.
		tv, ok := m.selected()
		out := m.panes.live(tv, ok, m.tabs.lastScreen(tv.Task.ID), false, m.snap.Tasks, w, h-1)
		return strings.Join(append(out, zoomLine(m.st, m.opt.LeaveFocusKey, tv, ok, m.status, m.statusOK, w)), "\n")
	}
	lines := make([]string, 0, h)
	lines = append(lines, headerLine(m.st, m.snap.Tasks, m.opt.RepoName, m.grid, w))
	// What sits over the bottom of the body when the operator is asked
	// something: the correction input, the / line or a y/n question.
	var bottom []string
	switch m.mode {
	case modeCorrect:
		tv, _ := m.selected()
		bottom = m.correct.panel(m.st, tv.Task.ID, w)
	case modeSearch:
		bottom = m.tasks.searchPanel(m.st, w)
	case modeConfirm:
		bottom = m.confirm.panel(m.st, w)
	}
	body := m.renderBody(l)
	if len(bottom) > 0 {
		keep := max(len(body)-len(bottom), 0)
		body = append(body[:keep], bottom...)
	}
	lines = append(lines, body...)
	lines = append(lines, m.renderBanner(w)...)
	f := m.footer()
	lines = append(lines, f.status(w), f.hints(w))
	return strings.Join(lines, "\n")
}

// zoomLine is the last row of focus mode zoomed: the task (tv, when ok)
// or the status message, and how to leave.
func zoomLine(st styles, leaveKey string, tv coord.TaskView, ok bool, status string, statusOK bool, w int) string {
	right := st.focus.Render(" ZOOM · " + leaveKey + " to leave ")
	left := ""
	if ok {
		left = st.dim.Render(" " + tv.Task.ID.Short() + " " + tv.Task.Title + " · " + string(tv.Task.Phase))
	}
	if status != "" {
		left = st.statusInfo.Render(" " + status)
		if !statusOK {
			left = st.statusErr.Render(" " + status)
		}
	}
	rw := ansi.StringWidth(right)
	return fit(left, max(w-rw, 0)) + right
}

// renderBody is the list and the selected task's panes, or the grid.
func (m *Model) renderBody(l layout) []string {
	if m.grid {
		return m.panes.grid(gridView{cells: gridTasks(m.snap.Tasks, m.selID, m.width, m.height), all: m.snap.Tasks, sel: m.selID, snapAt: m.snap.At, now: m.now(), width: m.width}, l)
	}
	var right []string
	if m.mode == modeForm {
		right = m.form.render(m.st, m.opt.Harnesses, l.rightW, l.rightH)
	} else {
		right = m.renderRight(l)
	}
	list := m.tasks.render(rowView{st: m.st, sel: m.selID, now: m.now(), snapAt: m.snap.At}, l.listW, l.listH)
	if !l.side {
		return append(list, right...)
	}
	sep := m.st.sep.Render("│")
	out := make([]string, l.bodyH)
	for i := range out {
		out[i] = list[i] + sep + right[i]
	}
	return out
}

func headerLine(st styles, tasks []coord.TaskView, repoName string, grid bool, w int) string {
	live, awaiting := 0, 0
	for _, tv := range tasks {
		if isLive(tv) {
			live++
		}
		if tv.Task.State == "awaiting-review" {
			awaiting++
		}
	}
	s := " orchestra-tui"
	if repoName != "" {
		s += " · " + repoName
	}
	s += " · " + plural(len(tasks), "task", "tasks") + fmt.Sprintf(" · %d live · %d awaiting review", live, awaiting)
	if grid {
		s += " · GRID"
	}
	return st.header.Render(fit(s, w))
}

// footer is the two lines at the bottom of the frame: the status line
// and the hints. The root model builds one per frame (footer).
type footer struct {
	st       styles
	mode     mode
	tab      tab
	leaveKey string // the key that leaves focus mode
	// text is the transient status message, ok whether it is good news;
	// spinner is the frame of the spinner while commands are in flight
	// ("" when none is, or animation is off).
	text    string
	ok      bool
	spinner string
	resume  bool // the new-task form resumes a task from a file
	grid    bool // the pane grid shows: g goes back to the list
	// task is the selected task (taskOK: there is one), whose state
	// decides the hints that act on it.
	task   coord.TaskView
	taskOK bool
}

// footer is the footer of this frame.
func (m *Model) footer() footer {
	f := footer{st: m.st, mode: m.mode, tab: m.tab, leaveKey: m.opt.LeaveFocusKey,
		text: m.status, ok: m.statusOK, resume: m.form.resume, grid: m.grid}
	if m.pending > 0 && !m.opt.NoAnim {
		f.spinner = spinFrames[m.spin%len(spinFrames)]
	}
	f.task, f.taskOK = m.selected()
	return f
}

// status is the transient message on the left and the mode on the
// right; focus mode says how to leave it.
func (f footer) status(w int) string {
	right := ""
	switch f.mode {
	case modeFocus:
		right = f.st.focus.Render(" FOCUS · " + f.leaveKey + " to leave ")
	case modeScroll:
		right = f.st.focus.Render(" SCROLL · esc to leave ")
	case modeDiff:
		right = f.st.focus.Render(" DIFF · esc to leave ")
	case modeReplay:
		right = f.st.focus.Render(" REPLAY · esc to leave ")
	}
	left := f.text
	if f.spinner != "" {
		left = f.spinner + " " + left
	}
	if left != "" {
		if f.ok {
			left = f.st.statusInfo.Render(left)
		} else {
			left = f.st.statusErr.Render(left)
		}
	}
	rw := ansi.StringWidth(right)
	if rw >= w {
		return fit(right, w)
	}
	return fit(left, w-rw) + right
}

// hints lists the keys that matter in the current mode.
func (f footer) hints(w int) string {
	var hints []string
	switch f.mode {
	case modeFocus:
		hints = []string{f.leaveKey + " leave focus", "every other key goes to the agent"}
	case modeScroll:
		hints = []string{"pgup/pgdn page", "k/j line", "g/G top/bottom", "esc leave"}
	case modeForm:
		hints = []string{"tab next field", "enter add", resumeKey + " resume from a file", "esc cancel"}
		if f.resume {
			hints = []string{"tab next field", "enter resume", resumeKey + " new task", "esc cancel"}
		}
	case modeCorrect:
		hints = []string{"enter send", "esc cancel"}
	case modeSearch:
		hints = []string{"type to narrow the list", "enter keep", "esc clear"}
	case modeConfirm:
		hints = []string{"y yes", "n no"}
	case modeDiff:
		// A copy: the hints that do not fit are cut out of it below.
		hints = append([]string(nil), diffBrowseHints...)
	case modeReplay:
		hints = append([]string(nil), replayHints...)
	default:
		// Most used first: the ones at the end give way on a narrow
		// terminal (help and quit excepted).
		// The selected task's own keys come early: they are what the
		// operator most likely wants next.
		first := []string{"j/k select"}
		if f.taskOK && isLive(f.task) {
			// Offered only where it works: on a task with no live
			// session it says "nothing to focus".
			first = append(first, "enter focus")
		}
		if f.tab == tabDiff {
			first = diffTabHints()
		}
		grid := "g grid"
		if f.grid {
			// The way back, early, so a narrow terminal keeps it.
			first, grid = append(first, "g list"), ""
		}
		hints = append(first, taskHints(f.task, f.taskOK)...)
		hints = append(hints, "c correct", "n new", "tab tabs")
		if grid != "" {
			hints = append(hints, grid)
		}
		hints = append(hints, "f filter", "? help", "q quit")
	}
	// Hints that do not fit give way from the middle: the last ones
	// (help and quit in normal mode) always show, since help lists the
	// rest.
	keep := 2
	for len(hints) > keep+1 && ansi.StringWidth(strings.Join(hints, " · ")) > w {
		hints = append(hints[:len(hints)-keep-1], hints[len(hints)-keep:]...)
	}
	var b strings.Builder
	for i, h := range hints {
		if i > 0 {
			b.WriteString(f.st.sep.Render(" · "))
		}
		k, desc, _ := strings.Cut(h, " ")
		b.WriteString(f.st.key.Render(k) + " " + f.st.dim.Render(desc))
	}
	return fit(b.String(), w)
}

// taskHints are the keys that act on the selected task in its state: a
// failed task offers retry, not resubmit; a task awaiting review offers
// approve. Help lists them all.
func taskHints(tv coord.TaskView, ok bool) []string {
	if !ok {
		return nil
	}
	switch tv.Task.State {
	case task.StateAwaitingReview:
		return []string{"a approve"}
	case task.StateCompleted:
		return []string{"M merge"}
	case task.StateMerged, task.StateMergeQueued, task.StateIntegrating, task.StatePullOpen:
		return nil // the merge queue has it, or it is merged: nothing to press
	case task.StateFailed, task.StateCancelled:
		return []string{"R retry"}
	case task.StateParked:
		return []string{"p unpark"}
	case task.StateQueued:
		return []string{"p park"}
	}
	return []string{"r resubmit", "e extend", "x expire"}
}

// helpScreen is the help screen: every key the console takes, by group.
type helpScreen struct {
	st     styles
	groups []helpGroup
}

// render lists every key with what it does, in as few columns as hold
// it all: descriptions wrap under themselves rather than being cut, and a
// group is never split across columns.
func (hs helpScreen) render(w, h int) []string {
	groups := hs.groups
	keyW := 0
	for _, g := range groups {
		for _, b := range g.keys {
			keyW = max(keyW, ansi.StringWidth(b.Help().Key))
		}
	}
	title := hs.st.header.Render(fit(" orchestra-tui · keys · any key closes this screen", w))
	rows := h - 1
	// As few columns as hold it all, but on a wide screen as many as keep
	// a column about helpColW cells wide (up to three), so a 200-column
	// terminal does not get one long column and 150 empty ones.
	var cols [][]string
	for n := max(1, min(3, w/helpColW)); n <= 3; n++ {
		colW := (w - helpGap*(n-1)) / n
		cols = hs.balanced(groups, keyW, colW, rows, n)
		if cols != nil || n == 3 {
			break
		}
	}
	n := max(len(cols), 1)
	colW := (w - helpGap*(n-1)) / n
	truncated := false
	if cols == nil {
		// Even three columns do not hold it: show what fits.
		n, colW = 2, (w-helpGap)/2
		cols = hs.columns(groups, keyW, colW, 1<<20, 1)
		all := cols[0]
		cols = [][]string{all[:min(rows, len(all))], all[min(rows, len(all)):min(2*rows, len(all))]}
		truncated = len(all) > 2*rows
	}
	out := []string{title}
	for r := 0; r < rows; r++ {
		var b strings.Builder
		for c := 0; c < n; c++ {
			if c > 0 {
				b.WriteString(strings.Repeat(" ", helpGap))
			}
			e := ""
			if c < len(cols) && r < len(cols[c]) {
				e = cols[c][r]
			}
			b.WriteString(fit(e, colW))
		}
		out = append(out, b.String())
	}
	if truncated {
		out[len(out)-1] = hs.st.dim.Render(fit("… more keys than fit: enlarge the terminal", w))
	}
	return block(out, w, h)
}

// helpColW is the width of a help column on a wide screen, and helpGap
// the blank cells between columns (one let a full-width key line run into
// the next column's heading).
const (
	helpColW = 64
	helpGap  = 2
)

// balanced lays the groups out in n columns of about equal height: the
// fewest rows per column, up to rows, at which they fit; nil when even
// rows do not hold them.
func (hs helpScreen) balanced(groups []helpGroup, keyW, colW, rows, n int) [][]string {
	all := hs.columns(groups, keyW, colW, 1<<20, 1)
	if all == nil {
		return nil
	}
	for r := min(rows, (len(all[0])+n-1)/n); r <= rows; r++ {
		if cols := hs.columns(groups, keyW, colW, r, n); cols != nil {
			return cols
		}
	}
	return nil
}

// columns lays the groups out in at most n columns of colW cells and
// rows lines, filling one column before the next; nil when they do not fit.
func (hs helpScreen) columns(groups []helpGroup, keyW, colW, rows, n int) [][]string {
	descW := max(colW-keyW-2, 8)
	indent := strings.Repeat(" ", keyW+2)
	var cols [][]string
	var cur []string
	for _, g := range groups {
		block := []string{hs.st.heading.Render(g.title)}
		for _, b := range g.keys {
			hb := b.Help()
			for i, l := range wrap(hb.Desc, descW) {
				if i == 0 {
					block = append(block, " "+hs.st.key.Render(padRight(hb.Key, keyW))+" "+l)
				} else {
					block = append(block, indent+l)
				}
			}
		}
		gap := 0
		if len(cur) > 0 {
			gap = 1
		}
		if len(cur)+gap+len(block) > rows && len(cur) > 0 {
			cols = append(cols, cur)
			cur, gap = nil, 0
		}
		if gap > 0 {
			cur = append(cur, "")
		}
		cur = append(cur, block...)
		if len(cur) > rows {
			return nil
		}
	}
	cols = append(cols, cur)
	if len(cols) > n {
		return nil
	}
	return cols
}

// wrap breaks plain text into lines of at most w cells at word boundaries.
// A hyphen does not end a word here (ansi.Wrap breaks after every one), and
// a `quoted command` is one word: a command such as `orchestra-tui merge ID`
// or a harness such as opencode-run must stay whole to be read or copied.
// A word longer than w is still cut.
func wrap(s string, w int) []string {
	var b strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '`':
			quoted = !quoted
		case r == '-':
			r = nbHyphen
		case r == ' ' && quoted:
			r = nbSpace
		}
		b.WriteRune(r)
	}
	out := strings.Split(ansi.Wrap(b.String(), w, ""), "\n")
	for i, l := range out {
		out[i] = strings.Map(func(r rune) rune {
			switch r {
			case nbHyphen:
				return '-'
			case nbSpace:
				return ' '
			}
			return r
		}, l)
	}
	return out
}

// Stand-ins that ansi.Wrap does not break at, one cell wide like the hyphen
// and the space they replace while wrap runs.
const (
	nbHyphen = '\u2011' // non-breaking hyphen
	nbSpace  = '\u00a0' // no-break space
)
