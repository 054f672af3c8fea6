package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

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
		return strings.Join(m.renderHelp(w, h), "\n")
	}
	if m.zoomed() {
		return strings.Join(m.renderZoom(w, h), "\n")
	}
	lines := make([]string, 0, h)
	lines = append(lines, m.renderHeader(w))
	bottom := m.renderBottomPanel(w)
	body := m.renderBody(l)
	if len(bottom) > 0 {
		keep := max(len(body)-len(bottom), 0)
		body = append(body[:keep], bottom...)
	}
	lines = append(lines, body...)
	lines = append(lines, m.renderBanner(w)...)
	lines = append(lines, m.renderStatus(w), m.renderHints(w))
	return strings.Join(lines, "\n")
}

// renderZoom is focus mode zoomed, as tmux's z: the agent's pane on every
// row but the last, which names the task and says how to leave.
func (m *Model) renderZoom(w, h int) []string {
	tv, ok := m.selected()
	out := m.renderLive(tv, ok, w, h-1)
	right := m.st.focus.Render(" ZOOM · " + m.opt.LeaveFocusKey + " to leave ")
	left := ""
	if ok {
		left = m.st.dim.Render(" " + tv.Task.ID.Short() + " " + tv.Task.Title + " · " + string(tv.Task.Phase))
	}
	if m.status != "" {
		left = m.st.statusInfo.Render(" " + m.status)
		if !m.statusOK {
			left = m.st.statusErr.Render(" " + m.status)
		}
	}
	rw := ansi.StringWidth(right)
	return append(out, fit(left, max(w-rw, 0))+right)
}

// renderBody is the list and the selected task's panes, or the grid.
func (m *Model) renderBody(l layout) []string {
	if m.grid {
		return m.renderGrid(l)
	}
	var right []string
	if m.mode == modeForm {
		right = m.renderForm(l.rightW, l.rightH)
	} else {
		right = m.renderRight(l)
	}
	list := m.renderTaskList(l.listW, l.listH)
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

func (m *Model) renderHeader(w int) string {
	live, awaiting := 0, 0
	for _, tv := range m.snap.Tasks {
		if isLive(tv) {
			live++
		}
		if tv.Task.State == "awaiting-review" {
			awaiting++
		}
	}
	s := " orchestra-tui"
	if m.opt.RepoName != "" {
		s += " · " + m.opt.RepoName
	}
	s += " · " + plural(len(m.snap.Tasks), "task", "tasks") + fmt.Sprintf(" · %d live · %d awaiting review", live, awaiting)
	if m.grid {
		s += " · GRID"
	}
	return m.st.header.Render(fit(s, w))
}

// renderBottomPanel is what sits over the bottom of the body when the
// operator is asked something: the correction input or a y/n question.
func (m *Model) renderBottomPanel(w int) []string {
	switch m.mode {
	case modeCorrect:
		tv, _ := m.selected()
		// The hint line below says enter sends and esc cancels.
		label, note := "CORRECT "+tv.Task.ID.Short(), "a human decision: it reaches the live agent once and outranks the plan in every later brief"
		if a := m.dv.anchor; a != nil {
			label, note = "COMMENT "+tv.Task.ID.Short()+" on "+ansiSafe(a.Where()), "a human decision at this line: it reaches the live agent once and goes into every later brief"
		}
		out := []string{m.st.sep.Render(strings.Repeat("─", w))}
		out = append(out, promptLines(m.st, label, note, w)...)
		return append(out, fit(m.correct.View(), w))
	case modeSearch:
		return []string{
			m.st.sep.Render(strings.Repeat("─", w)),
			fit(m.searchIn.View(), w),
		}
	case modeConfirm:
		out := []string{m.st.sep.Render(strings.Repeat("─", w))}
		for _, l := range wrap(m.confirm.prompt, w) {
			out = append(out, m.st.prompt.Render(fit(l, w)))
		}
		return out
	}
	return nil
}

// promptLines is an input's label and what it does, wrapped to w rather
// than cut: the label in the prompt's style, the note dim.
func promptLines(st styles, label, note string, w int) []string {
	lines := wrap(label+" · "+note, w)
	for i, l := range lines {
		if i == 0 && strings.HasPrefix(l, label) {
			lines[i] = fit(st.prompt.Render(label)+st.dim.Render(strings.TrimPrefix(l, label)), w)
		} else {
			lines[i] = fit(st.dim.Render(l), w)
		}
	}
	return lines
}

// renderStatus is the transient message on the left and the mode on the
// right; focus mode says how to leave it.
func (m *Model) renderStatus(w int) string {
	right := ""
	switch m.mode {
	case modeFocus:
		right = m.st.focus.Render(" FOCUS · " + m.opt.LeaveFocusKey + " to leave ")
	case modeScroll:
		right = m.st.focus.Render(" SCROLL · esc to leave ")
	case modeDiff:
		right = m.st.focus.Render(" DIFF · esc to leave ")
	case modeReplay:
		right = m.st.focus.Render(" REPLAY · esc to leave ")
	}
	left := m.status
	if m.pending > 0 && !m.opt.NoAnim {
		left = spinFrames[m.spin%len(spinFrames)] + " " + left
	}
	if left != "" {
		if m.statusOK {
			left = m.st.statusInfo.Render(left)
		} else {
			left = m.st.statusErr.Render(left)
		}
	}
	rw := ansi.StringWidth(right)
	if rw >= w {
		return fit(right, w)
	}
	return fit(left, w-rw) + right
}

// renderHints lists the keys that matter in the current mode.
func (m *Model) renderHints(w int) string {
	var hints []string
	switch m.mode {
	case modeFocus:
		hints = []string{m.opt.LeaveFocusKey + " leave focus", "every other key goes to the agent"}
	case modeScroll:
		hints = []string{"pgup/pgdn page", "k/j line", "g/G top/bottom", "esc leave"}
	case modeForm:
		hints = []string{"tab next field", "enter add", resumeKey + " resume from a file", "esc cancel"}
		if m.form.resume {
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
		if tv, ok := m.selected(); ok && isLive(tv) {
			// Offered only where it works: on a task with no live
			// session it says "nothing to focus".
			first = append(first, "enter focus")
		}
		if m.tab == tabDiff {
			first = diffTabHints()
		}
		grid := "g grid"
		if m.grid {
			// The way back, early, so a narrow terminal keeps it.
			first, grid = append(first, "g list"), ""
		}
		hints = append(first, m.taskHints()...)
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
			b.WriteString(m.st.sep.Render(" · "))
		}
		k, desc, _ := strings.Cut(h, " ")
		b.WriteString(m.st.key.Render(k) + " " + m.st.dim.Render(desc))
	}
	return fit(b.String(), w)
}

// taskHints are the keys that act on the selected task in its state: a
// failed task offers retry, not resubmit; a task awaiting review offers
// approve. Help lists them all.
func (m *Model) taskHints() []string {
	tv, ok := m.selected()
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

// renderHelp lists every key with what it does, in as few columns as hold
// it all: descriptions wrap under themselves rather than being cut, and a
// group is never split across columns.
func (m *Model) renderHelp(w, h int) []string {
	groups := m.keys.helpGroups()
	keyW := 0
	for _, g := range groups {
		for _, b := range g.keys {
			keyW = max(keyW, ansi.StringWidth(b.Help().Key))
		}
	}
	title := m.st.header.Render(fit(" orchestra-tui · keys · any key closes this screen", w))
	rows := h - 1
	var cols [][]string
	for n := 1; n <= 3; n++ {
		colW := (w - (n - 1)) / n
		cols = m.helpColumns(groups, keyW, colW, rows, n)
		if cols != nil || n == 3 {
			break
		}
	}
	n := max(len(cols), 1)
	colW := (w - (n - 1)) / n
	truncated := false
	if cols == nil {
		// Even three columns do not hold it: show what fits.
		n, colW = 2, (w-1)/2
		cols = m.helpColumns(groups, keyW, colW, 1<<20, 1)
		all := cols[0]
		cols = [][]string{all[:min(rows, len(all))], all[min(rows, len(all)):min(2*rows, len(all))]}
		truncated = len(all) > 2*rows
	}
	out := []string{title}
	for r := 0; r < rows; r++ {
		var b strings.Builder
		for c := 0; c < n; c++ {
			if c > 0 {
				b.WriteString(" ")
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
		out[len(out)-1] = m.st.dim.Render(fit("… more keys than fit: enlarge the terminal", w))
	}
	return block(out, w, h)
}

// helpColumns lays the groups out in at most n columns of colW cells and
// rows lines, filling one column before the next; nil when they do not fit.
func (m *Model) helpColumns(groups []helpGroup, keyW, colW, rows, n int) [][]string {
	descW := max(colW-keyW-2, 8)
	indent := strings.Repeat(" ", keyW+2)
	var cols [][]string
	var cur []string
	for _, g := range groups {
		block := []string{m.st.heading.Render(g.title)}
		for _, b := range g.keys {
			hb := b.Help()
			for i, l := range wrap(hb.Desc, descW) {
				if i == 0 {
					block = append(block, " "+m.st.key.Render(padRight(hb.Key, keyW))+" "+l)
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
