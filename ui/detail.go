package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The selected task's detail is read once, then followed: each ledger event
// for it asks the engine only for the events after the last sequence seen,
// and for the sessions, brief, verdicts and decisions only when the event's
// kind can change them (coord.RecordKind). Rendered event lines are kept
// too, so an event costs the same late in a long run as early in it.

// shownEvents is how many of the newest events the Events tab shows; the
// ledger in the store has all of them.
const shownEvents = 500

// keptLedgers is how many tasks' followed details the console keeps, so
// moving the selection back and forth does not reread a ledger.
const keptLedgers = 8

// ledger is one task's detail as the console follows it.
type ledger struct {
	d       coord.Detail
	lastSeq int64
	// usage is the data of the session.usage events, which the sessions
	// list prices sessions from, read once and kept apart so the list never
	// scans the whole ledger.
	usage []fork.UsageData
	// lines are the newest events rendered (at most shownEvents), newest
	// last, at width w; rendered counts every event rendered into it.
	lines    [][]string
	w        int
	rendered int
	used     uint64 // when it was last selected, for eviction
}

// merge folds a read into the ledger: events after the last one seen, and
// the records unless the read skipped them.
func (l *ledger) merge(q coord.DetailQuery, d coord.Detail) {
	events := l.d.Events
	if q.AfterSeq == 0 && !q.EventsOnly {
		events = nil // a full read
		l.usage, l.lines, l.lastSeq, l.rendered = nil, nil, 0, 0
	}
	if !q.EventsOnly {
		l.d = d // the records as read now
	}
	l.d.Task = d.Task
	for _, ev := range d.Events {
		if ev.Seq != 0 && ev.Seq <= l.lastSeq {
			continue // an overlapping read already brought it
		}
		events = append(events, ev)
		if ev.Kind == task.EvUsage && len(ev.Data) > 0 {
			var u fork.UsageData
			if json.Unmarshal(ev.Data, &u) == nil && u.SessionID != "" {
				l.usage = append(l.usage, u)
			}
		}
		l.lastSeq = max(l.lastSeq, ev.Seq)
	}
	l.d.Events = events
}

// detailTabs are the selected task's Brief, Verdict and Events tabs: the
// detail read for it, the followed ledgers it is read from, and the
// viewports the tabs scroll in.
type detailTabs struct {
	st  styles
	now func() time.Time

	detail      coord.Detail
	detailID    task.ID // which task detail belongs to; empty when none
	detailErr   error
	ledgers     map[task.ID]*ledger // followed details, by task
	ledgerClock uint64
	brief       viewport.Model
	verdicts    viewport.Model
	events      viewport.Model
}

func newDetailTabs(st styles, now func() time.Time) detailTabs {
	dt := detailTabs{st: st, now: now, ledgers: map[task.ID]*ledger{},
		brief: viewport.New(), verdicts: viewport.New(), events: viewport.New()}
	for _, vp := range []*viewport.Model{&dt.brief, &dt.verdicts, &dt.events} {
		vp.SoftWrap = true
	}
	return dt
}

// followed returns the task's ledger, creating it, and evicts the least
// recently selected beyond keptLedgers.
func (dt *detailTabs) followed(id task.ID) *ledger {
	dt.ledgerClock++
	if l, ok := dt.ledgers[id]; ok {
		l.used = dt.ledgerClock
		return l
	}
	if len(dt.ledgers) >= keptLedgers {
		var oldest task.ID
		for k, l := range dt.ledgers {
			if oldest == "" || l.used < dt.ledgers[oldest].used {
				oldest = k
			}
		}
		delete(dt.ledgers, oldest)
	}
	l := &ledger{used: dt.ledgerClock}
	dt.ledgers[id] = l
	return l
}

// fetchDetail reads what changed in the selected task's detail since the
// console last read it (everything, the first time), off the update loop.
func (m *Model) fetchDetail() tea.Cmd {
	if m.selID == "" {
		return nil
	}
	q := coord.DetailQuery{}
	if l, ok := m.tabs.ledgers[m.selID]; ok && l.lastSeq > 0 {
		q.AfterSeq = l.lastSeq
	}
	return readDetail(m.eng, m.selID, q)
}

// readDetail reads task id's detail from the engine, off Update.
func readDetail(e coord.Engine, id task.ID, q coord.DetailQuery) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		d, err := e.Detail(ctx, id, q)
		return detailMsg{id: id, q: q, d: d, err: err}
	}
}

func (m *Model) handleEvent(msg eventMsg) tea.Cmd {
	var follow tea.Cmd
	if m.tab == tabDiff && msg.ev.TaskID == m.selID && diffFollows(msg.ev) {
		follow = m.fetchDiff()
	}
	cmd := tea.Batch(m.refresh(), alert(m.opt, m.opened, m.snap.Tasks, msg.ev), follow)
	if msg.ev.TaskID != m.selID || m.selID == "" {
		return cmd
	}
	l, ok := m.tabs.ledgers[m.selID]
	if !ok || l.lastSeq == 0 {
		return tea.Batch(cmd, m.fetchDetail())
	}
	q := coord.DetailQuery{AfterSeq: l.lastSeq, EventsOnly: !coord.RecordKind(msg.ev.Kind)}
	return tea.Batch(cmd, readDetail(m.eng, m.selID, q))
}

// take folds a read into the task's followed ledger and, when it is about
// the selected task sel, makes it the tabs' detail; it reports whether it
// did (the tabs are then filled again).
func (dt *detailTabs) take(msg detailMsg, sel task.ID) bool {
	if msg.err == nil {
		dt.followed(msg.id).merge(msg.q, msg.d)
	}
	if msg.id != sel {
		return false
	}
	dt.detailID, dt.detailErr = msg.id, msg.err
	if l, ok := dt.ledgers[msg.id]; ok {
		dt.detail = l.d
	}
	return true
}

// eventsContent is the sessions, then the newest shownEvents events, one
// entry each, refusals in red with the reason's sentence. An entry longer
// than the tab's width w continues on lines indented past its time, so the
// times stay a clean column. Only events not rendered before at this width
// are rendered.
func (dt *detailTabs) eventsContent(w int) string {
	l, ok := dt.ledgers[dt.detailID]
	if !ok || len(l.d.Events) == 0 {
		return dt.st.dim.Render("no events yet")
	}
	if l.w != w || l.rendered > len(l.d.Events) {
		l.lines, l.w, l.rendered = nil, w, 0
	}
	// Render only the events not rendered yet, and of those only the
	// ones that will show.
	from := max(l.rendered, len(l.d.Events)-shownEvents)
	for _, ev := range l.d.Events[from:] {
		l.lines = append(l.lines, dt.eventEntry(ev, w))
	}
	l.rendered = len(l.d.Events)
	if n := len(l.lines) - shownEvents; n > 0 {
		l.lines = append(l.lines[:0:0], l.lines[n:]...)
	}
	out := dt.sessionsContent(w)
	if n := len(l.d.Events) - len(l.lines); n > 0 {
		out = append(out, dt.st.dim.Render(fmt.Sprintf("… %d earlier events are in the ledger (orchestra-tui run --headless lists them)", n)))
	}
	for _, entry := range l.lines {
		out = append(out, entry...)
	}
	return strings.Join(out, "\n")
}

// eventEntry renders one event as its lines at width w.
func (dt *detailTabs) eventEntry(ev task.Event, w int) []string {
	const indent = 9 // "15:04:05 "
	first := wrap(dt.eventLine(ev), w)
	out := []string{first[0]}
	if len(first) > 1 {
		pad := strings.Repeat(" ", indent)
		rest := strings.Join(first[1:], " ")
		for _, part := range wrap(rest, max(w-indent, 1)) {
			out = append(out, pad+part)
		}
	}
	return out
}

// usageData is what the selected task's session.usage events said.
func (dt *detailTabs) usageData() []fork.UsageData {
	if l, ok := dt.ledgers[dt.detailID]; ok {
		return l.usage
	}
	return nil
}
