package ui

import (
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// filter narrows the task list by state; f cycles through them.
type filter int

const (
	filterAll filter = iota
	filterLive
	filterQueued
	filterAwaiting
	filterEnded
	filterCount
)

func (f filter) String() string {
	return [...]string{"all", "live", "queued", "awaiting-review", "ended"}[f]
}

func (f filter) match(tv coord.TaskView) bool {
	s := tv.Task.State
	switch f {
	case filterLive:
		return s.Live()
	case filterQueued:
		return s == task.StateQueued
	case filterAwaiting:
		return s == task.StateAwaitingReview
	case filterEnded:
		return s.Terminal()
	}
	return true
}

// visible returns the tasks the filter lets through, in snapshot order.
func (m *Model) visible() []coord.TaskView {
	if m.filter == filterAll {
		return m.snap.Tasks
	}
	var out []coord.TaskView
	for _, tv := range m.snap.Tasks {
		if m.filter.match(tv) {
			out = append(out, tv)
		}
	}
	return out
}

// fixSelection keeps the selection on a visible task: the same one when it
// is still listed, the first one otherwise.
func (m *Model) fixSelection() {
	vis := m.visible()
	for _, tv := range vis {
		if tv.Task.ID == m.selID {
			return
		}
	}
	m.selID = ""
	if len(vis) > 0 {
		m.selID = vis[0].Task.ID
	}
}

// moveSelection moves by delta within the visible tasks (or, in grid mode,
// within the live ones) and reports whether the selection changed.
func (m *Model) moveSelection(delta int) bool {
	vis := m.visible()
	if m.grid {
		vis = m.gridTasks()
	}
	if len(vis) == 0 {
		return false
	}
	idx := 0
	for i, tv := range vis {
		if tv.Task.ID == m.selID {
			idx = i
		}
	}
	idx = max(0, min(len(vis)-1, idx+delta))
	if vis[idx].Task.ID == m.selID {
		return false
	}
	m.selID = vis[idx].Task.ID
	return true
}

// listColumns decides which columns fit in width w: the list drops the
// least important ones first as it narrows.
type listColumns struct {
	phase, attempt, lease, flag bool
	titleW, flagW               int
}

func columnsFor(w int) listColumns {
	// marker(2) glyph(2) id(9) state(16) are always there.
	c := listColumns{lease: w >= 44, phase: w >= 58, attempt: w >= 64, flag: w >= 78}
	fixed := 2 + 2 + 9 + 16
	if c.lease {
		fixed += 6
	}
	if c.phase {
		fixed += 10
	}
	if c.attempt {
		fixed += 4
	}
	rest := w - fixed
	if c.flag {
		c.flagW = min(28, rest/2)
		rest -= c.flagW + 1
	}
	c.titleW = max(rest-1, 4)
	return c
}

// renderTaskList draws the list header and as many rows as fit, scrolled so
// the selection stays visible.
func (m *Model) renderTaskList(w, h int) []string {
	vis := m.visible()
	c := columnsFor(w)
	lines := make([]string, 0, h)
	title := fmt.Sprintf("TASKS %d/%d · filter %s", len(vis), len(m.snap.Tasks), m.filter)
	lines = append(lines, m.st.bold.Render(fit(title, w)))
	rows := h - 2
	if rows <= 0 {
		return block(lines, w, h)
	}
	lines = append(lines, m.st.dim.Render(fit(m.listHeader(c), w)))
	if len(vis) == 0 {
		msg := "no tasks yet · n adds one"
		if len(m.snap.Tasks) > 0 {
			msg = "no " + m.filter.String() + " tasks · f changes the filter"
		}
		lines = append(lines, m.st.dim.Render(fit(msg, w)))
		return block(lines, w, h)
	}
	sel := 0
	for i, tv := range vis {
		if tv.Task.ID == m.selID {
			sel = i
		}
	}
	start := 0
	if sel >= rows {
		start = sel - rows + 1
	}
	for i := start; i < len(vis) && i < start+rows; i++ {
		row := fit(m.taskRow(vis[i], c), w)
		if vis[i].Task.ID == m.selID {
			row = m.st.selected.Render(row)
		}
		lines = append(lines, row)
	}
	return block(lines, w, h)
}

func (m *Model) listHeader(c listColumns) string {
	var b strings.Builder
	b.WriteString("  V ID       ")
	b.WriteString(padRight("TITLE", c.titleW) + " ")
	if c.phase {
		b.WriteString("PHASE     ")
	}
	b.WriteString("STATE           ")
	if c.attempt {
		b.WriteString("#   ")
	}
	if c.lease {
		b.WriteString("LEASE ")
	}
	if c.flag {
		b.WriteString("FLAG")
	}
	return b.String()
}

// taskRow is one plain-text row; styling the whole row at once keeps the
// selection highlight intact.
func (m *Model) taskRow(tv coord.TaskView, c listColumns) string {
	var b strings.Builder
	t := tv.Task
	marker := "  "
	if tv.Task.ID == m.selID {
		marker = "▸ "
	}
	b.WriteString(marker)
	b.WriteString(verdictGlyph(tv.Verdict) + " ")
	b.WriteString(padRight(t.ID.Short(), 8) + " ")
	b.WriteString(padRight(t.Title, c.titleW) + " ")
	if c.phase {
		b.WriteString(padRight(string(t.Phase), 9) + " ")
	}
	b.WriteString(padRight(string(t.State), 15) + " ")
	if c.attempt {
		b.WriteString(padRight(fmt.Sprintf("%d", t.Attempt), 3) + " ")
	}
	if c.lease {
		l := "  -  "
		if tv.Lease != nil {
			l = clock(m.leaseClocks(*tv.Lease).remaining)
		}
		b.WriteString(padRight(l, 5) + " ")
	}
	if c.flag {
		b.WriteString(padRight(taskFlag(tv), c.flagW))
	}
	return b.String()
}

// taskFlag is the attention mark of a task: the engine's flag, or the reason
// an ended or parked task is where it is.
func taskFlag(tv coord.TaskView) string {
	if tv.Flag != "" {
		return tv.Flag
	}
	switch tv.Task.State {
	case task.StateFailed, task.StateParked, task.StateCancelled:
		return tv.Task.Reason
	}
	return ""
}

// padRight pads or truncates plain text to exactly w cells.
func padRight(s string, w int) string { return fit(s, w) }
