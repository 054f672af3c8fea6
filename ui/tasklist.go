package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// filter narrows the task list by what the operator is looking for; f
// cycles through them.
type filter int

const (
	filterAll       filter = iota
	filterLive             // a session may be running
	filterAttention        // waiting for a human: see needsHuman
	filterEnded            // completed, failed or cancelled: the history
	filterCount
)

func (f filter) String() string {
	return [...]string{"all", "live", "attention", "ended"}[f]
}

func (f filter) match(tv coord.TaskView) bool {
	switch f {
	case filterLive:
		return isLive(tv)
	case filterAttention:
		return needsHuman(tv)
	case filterEnded:
		return tv.Task.State.Terminal()
	}
	return true
}

// needsHuman reports whether a task waits for the operator: its work awaits
// review, its pane is stuck, the engine flagged it (unplaceable, refused),
// or it failed and only a human can retry it.
func needsHuman(tv coord.TaskView) bool {
	s := tv.Task.State
	return s == task.StateAwaitingReview || s == task.StateFailed || tv.Stuck || tv.Flag != ""
}

// listRank orders the list: tasks that need a human first, then the live
// ones, then the rest.
func listRank(tv coord.TaskView) int {
	switch {
	case needsHuman(tv):
		return 0
	case isLive(tv):
		return 1
	}
	return 2
}

// taskList is the task list the operator sees: the snapshot's tasks
// filtered, searched and ordered, the order held while the operator moves
// through it (listhold.go), and drawn into the list's area. The selection
// is the root model's: the list is told which task it is.
type taskList struct {
	tasks []coord.TaskView // the snapshot's, in its order
	gen   uint64           // the snapshot's generation
	list  []coord.TaskView // the tasks listed: filtered, searched, in order
	// listGen is the snapshot generation list was ordered from (0: none).
	listGen uint64
	filter  filter
	search  listSearch
	// holdUntil is when the list may re-sort again after the operator's
	// last move through it (listhold.go).
	holdUntil time.Time
	searchIn  textinput.Model // the / line (listnav.go)
}

// setSnap takes a new snapshot and rebuilds the list the operator sees from
// it: filtered, searched and ordered once per snapshot, not once per frame.
func (m *Model) setSnap(s coord.Snapshot) {
	m.snap = s
	m.tasks.take(s, m.now())
}

// take rebuilds the list from snapshot s.
//
// A snapshot of the same generation differs from the last one only in its
// clocks (coord.Snapshot.Gen), so the order stands: only the views with a
// lease, whose clocks moved, are taken again, and thousands of ended tasks
// are not filtered and sorted once a second for a ticking lease clock.
func (tl *taskList) take(s coord.Snapshot, now time.Time) {
	same := s.Gen != 0 && s.Gen == tl.gen && len(s.Tasks) == len(tl.tasks) && tl.listGen == s.Gen
	tl.tasks, tl.gen = s.Tasks, s.Gen
	if !same {
		tl.rebuild(now)
		tl.listGen = s.Gen
		return
	}
	var leased map[task.ID]coord.TaskView
	for _, tv := range s.Tasks {
		if tv.Lease != nil {
			if leased == nil {
				leased = map[task.ID]coord.TaskView{}
			}
			leased[tv.Task.ID] = tv
		}
	}
	for i, tv := range tl.list {
		if tv.Lease == nil {
			continue
		}
		if now, ok := leased[tv.Task.ID]; ok {
			tl.list[i] = now
		}
	}
}

// rebuild recomputes the visible list after the snapshot, the filter or
// the search changed.
//
// The list's order: by rank; live tasks in creation order, so rows (and
// grid cells) do not jump while they run; the others by most recent
// activity first, so last night's history reads from the top. While the
// operator moves through the list the rows keep their order (listhold.go).
func (tl *taskList) rebuild(now time.Time) {
	tl.listGen = 0 // set again by setSnap when it is a snapshot's whole rebuild
	// The sort moves small keys, not the views (hundreds of bytes each):
	// ten thousand tasks sorted as views cost most of a first frame.
	type key struct {
		rank int
		at   time.Time // zero for live tasks, which keep creation order
		id   task.ID
		i    int
	}
	held := tl.heldPositions(now) // read before tl.list is rebuilt in place
	keys := make([]key, 0, len(tl.tasks))
	for i, tv := range tl.tasks {
		if tl.filter.match(tv) && tl.search.match(tv) {
			k := key{rank: listRank(tv), id: tv.Task.ID, i: i}
			if k.rank != 1 {
				k.at = tv.Task.UpdatedAt
			}
			keys = append(keys, k)
		}
	}
	// The order of listBefore.
	slices.SortFunc(keys, func(a, b key) int {
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	keepHeld(keys, func(k key) task.ID { return k.id }, held)
	out := slices.Grow(tl.list[:0], len(keys))
	for _, k := range keys {
		out = append(out, tl.tasks[k.i])
	}
	tl.list = out
}

// visible returns the tasks the filter and the search let through, in the
// list's order.
func (tl *taskList) visible() []coord.TaskView { return tl.list }

// fixSelection keeps the selection on a visible task: the same one when it
// is still listed, the first one otherwise.
func (m *Model) fixSelection() {
	vis := m.tasks.visible()
	if m.wantSel != "" {
		for _, tv := range vis {
			if tv.Task.ID == m.wantSel {
				m.selID, m.wantSel = m.wantSel, ""
				return
			}
		}
	}
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

// moveIn is the task delta rows from sel among vis (clamped to its ends),
// and whether that is another task.
func moveIn(vis []coord.TaskView, sel task.ID, delta int) (task.ID, bool) {
	if len(vis) == 0 {
		return sel, false
	}
	idx := 0
	for i, tv := range vis {
		if tv.Task.ID == sel {
			idx = i
		}
	}
	idx = max(0, min(len(vis)-1, idx+delta))
	if vis[idx].Task.ID == sel {
		return sel, false
	}
	return vis[idx].Task.ID, true
}

// listColumns decides which columns fit in width w. The title is what
// tells tasks apart, so it keeps a readable width and the other columns
// give way as the list narrows: first the long state names shorten (the
// tab bar still shows the full one), then the flag goes (a ⚑ mark stays),
// then the attempt (the detail shows it), the host (on a shared store: which
// machine runs a task matters more than its attempt), the lease clock (the
// lease strip shows the selected task's) and last the phase.
type listColumns struct {
	phase, attempt, lease, flag bool
	shortState                  bool
	titleW, flagW               int
	// hostW is the width of the HOST column (the machine a task runs on,
	// when engines share a store); 0 when it is not shown.
	hostW int
}

// maxHostW caps the HOST column; a longer machine name is cut.
const maxHostW = 12

const (
	minTitleW  = 16 // below this a title stops being readable
	roomyTitle = 20 // below this, long state names shorten
	minFlagW   = 10
	maxFlagW   = 28
)

func columnsFor(w, hostW int) listColumns {
	c := listColumns{phase: true, attempt: true, lease: true, flag: true, hostW: min(hostW, maxHostW)}
	steps := []struct {
		below int // the title width under which this step is taken
		take  func()
	}{
		{roomyTitle, func() { c.shortState = true }},
		{minTitleW, func() { c.flag = false }},
		{minTitleW, func() { c.attempt = false }},
		{minTitleW, func() { c.hostW = 0 }},
		{minTitleW, func() { c.lease = false }},
		{minTitleW, func() { c.phase = false }},
	}
	c.layOut(w)
	for _, s := range steps {
		if c.titleW >= s.below {
			continue
		}
		s.take()
		c.layOut(w)
	}
	c.titleW = max(c.titleW, 4)
	return c
}

// layOut gives the flag, when shown, two fifths of what the fixed columns
// leave, and the title the rest.
func (c *listColumns) layOut(w int) {
	rest := w - c.fixedW() - 1 // one space after the title
	c.flagW = 0
	if c.flag { // the last column: no space after it
		c.flagW = min(maxFlagW, max(minFlagW, rest*2/5))
		rest -= c.flagW
	}
	c.titleW = rest
}

// fixedW is the width of every column but the title and the flag.
func (c listColumns) fixedW() int {
	n := 2 + 2 + 9 + stateW(c.shortState) + 1 // marker, glyph, id, state
	if c.phase {
		n += 10
	}
	if c.attempt {
		n += 4
	}
	if c.lease {
		n += 6
	}
	if c.hostW > 0 {
		n += c.hostW + 1
	}
	return n
}

// hostWidth is the width the HOST column needs: the longest machine name
// of the tasks, 0 when none runs on a shared store.
func hostWidth(tasks []coord.TaskView) int {
	w := 0
	for _, tv := range tasks {
		if tv.Host != "" {
			w = max(w, ansi.StringWidth(tv.Host), len("HOST"))
		}
	}
	return w
}

func stateW(short bool) int {
	if short {
		return 9 // "completed", "cancelled"
	}
	return 15 // "awaiting-review"
}

// stateLabel is a state's name, or its short form in a narrow list.
func stateLabel(s task.State, short bool) string {
	if short && s == task.StateAwaitingReview {
		return "awaiting"
	}
	return string(s)
}

// rowView is what a row needs besides its task: the selected task, the
// styles, the clock and the snapshot's instant (lease clocks tick from it).
type rowView struct {
	st     styles
	sel    task.ID
	now    time.Time
	snapAt time.Time
}

// render draws the list header and as many rows as fit in w×h, scrolled so
// the selection stays visible.
func (tl *taskList) render(v rowView, w, h int) []string {
	vis := tl.visible()
	c := columnsFor(w, hostWidth(vis))
	lines := make([]string, 0, h)
	title := fmt.Sprintf("TASKS %d/%d · filter %s", len(vis), len(tl.tasks), tl.filter)
	if tl.search.query != "" {
		title += " · /" + tl.search.query
	}
	lines = append(lines, v.st.bold.Render(fit(title, w)))
	rows := h - 2
	if rows <= 0 {
		return block(lines, w, h)
	}
	lines = append(lines, v.st.dim.Render(fit(listHeader(c), w)))
	if len(vis) == 0 {
		msg := "no tasks yet · n adds one"
		if len(tl.tasks) > 0 {
			msg = "no " + tl.filter.String() + " tasks · f changes the filter"
			if tl.search.query != "" {
				msg = "no task matches /" + tl.search.query + " · esc clears it"
			}
		}
		lines = append(lines, v.st.dim.Render(fit(msg, w)))
		return block(lines, w, h)
	}
	sel := 0
	for i, tv := range vis {
		if tv.Task.ID == v.sel {
			sel = i
		}
	}
	start := 0
	if sel >= rows {
		start = sel - rows + 1
	}
	for i := start; i < len(vis) && i < start+rows; i++ {
		row := fit(v.taskRow(vis[i], c), w)
		if vis[i].Task.ID == v.sel {
			row = v.st.selected.Render(row)
		}
		lines = append(lines, row)
	}
	return block(lines, w, h)
}

func listHeader(c listColumns) string {
	var b strings.Builder
	b.WriteString("  V ID       ")
	b.WriteString(padRight("TITLE", c.titleW) + " ")
	if c.phase {
		b.WriteString("PHASE     ")
	}
	b.WriteString(padRight("STATE", stateW(c.shortState)) + " ")
	if c.hostW > 0 {
		b.WriteString(padRight("HOST", c.hostW) + " ")
	}
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
func (v rowView) taskRow(tv coord.TaskView, c listColumns) string {
	var b strings.Builder
	t := tv.Task
	// The marker column: the selection, and a flag mark when the flag
	// column has given way, so a stuck or unplaceable task still stands
	// out. (An ended task's reason is no alarm; its state says enough.)
	marker := " "
	if tv.Task.ID == v.sel {
		marker = "▸"
	}
	if !c.flag && tv.Flag != "" {
		marker += "⚑"
	} else {
		marker += " "
	}
	b.WriteString(marker)
	b.WriteString(rowGlyph(tv) + " ")
	b.WriteString(padRight(t.ID.Short(), 8) + " ")
	b.WriteString(padRight(t.Title, c.titleW) + " ")
	if c.phase {
		b.WriteString(padRight(string(t.Phase), 9) + " ")
	}
	b.WriteString(padRight(rowState(tv, c.shortState), stateW(c.shortState)) + " ")
	if c.hostW > 0 {
		b.WriteString(padRight(tv.Host, c.hostW) + " ")
	}
	if c.attempt {
		b.WriteString(padRight(fmt.Sprintf("%d", t.Attempt), 3) + " ")
	}
	if c.lease {
		l := "  -  "
		if tv.Lease != nil {
			l = clock(clocksOf(*tv.Lease, v.snapAt, v.now).remaining)
		}
		b.WriteString(padRight(l, 5) + " ")
	}
	if c.flag {
		b.WriteString(padRight(limitFlag(tv, v.now), c.flagW))
	}
	return b.String()
}

// padRight pads or truncates plain text to exactly w cells; a cut ends in
// an ellipsis right after the last word's letters ("migrate sessions…",
// never "migrate sessions …").
func padRight(s string, w int) string {
	if w > 1 && ansi.StringWidth(s) > w {
		s = strings.TrimRight(ansi.Truncate(s, w-1, ""), " ") + "…"
	}
	return fit(s, w)
}
