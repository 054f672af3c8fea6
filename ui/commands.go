package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/notify"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// commandTimeout bounds one engine call made on the operator's behalf.
const commandTimeout = 30 * time.Second

// Messages the engine calls return. Each carries what it is about, so a
// late answer for a task no longer selected is recognised and dropped.
type (
	eventMsg struct{ ev task.Event }
	// panesMsg draws a frame for panes that changed; with snap, the
	// engine's snapshot changed with no event and is read again.
	panesMsg struct {
		ids  []task.ID
		snap bool
	}
	detailMsg struct {
		id  task.ID
		q   coord.DetailQuery
		d   coord.Detail
		err error
	}
	doneMsg struct {
		cmd coord.Command
		res coord.Result
		err error
	}
	inputDoneMsg struct{ err error }
	// resizeDoneMsg is the engine's answer to a pane size: with sized,
	// the size asked was recorded and the pty took took.
	resizeDoneMsg struct {
		id          task.ID
		asked, took [2]int
		sized       bool
		err         error
	}
	leaseTickMsg struct{}
	spinTickMsg  struct{}
)

// refresh takes a new snapshot (cheap, from memory) and, when the selection
// moved because its task vanished from the filter, fetches the new detail.
func (m *Model) refresh() tea.Cmd {
	before := m.selID
	m.setSnap(m.eng.Snapshot())
	m.fixSelection()
	m.panes.forget(m.snap.Tasks)
	// Focus mode is left once the session it types into has ended: keys
	// must not go on to the task's next session, or to nothing.
	if tv, ok := m.selected(); m.mode == modeFocus && (!ok || tv.SessionID != m.focusSession || !isLive(tv)) {
		m.mode, m.zoom = modeNormal, false
		m.setStatus("the session you were typing into ended; left focus (enter focuses the next one)", true)
	}
	if m.tabs.size(m.layout()) {
		m.refreshTabs()
	}
	cmds := []tea.Cmd{m.armLeaseTick(), m.syncPaneSizes()}
	if m.selID != before {
		cmds = append(cmds, m.selectionChanged())
	}
	return tea.Batch(cmds...)
}

// selectionChanged resets what belonged to the previous task and asks for
// the new one's detail.
func (m *Model) selectionChanged() tea.Cmd {
	m.panes.scrollOff = 0
	if m.mode == modeScroll {
		m.mode = modeNormal
	}
	if m.tabs.size(m.layout()) {
		m.refreshTabs()
	}
	if m.tab == tabDiff {
		return tea.Batch(m.fetchDetail(), m.fetchDiff(), m.syncPaneSizes())
	}
	return tea.Batch(m.fetchDetail(), m.syncPaneSizes())
}

// alert rings the bell and sends a desktop notification when an event
// means a task now needs a human. Events from before the console opened
// (history replayed on attach) ring nothing.
func alert(opt Options, opened time.Time, tasks []coord.TaskView, ev task.Event) tea.Cmd {
	if !opt.Bell && !opt.Desktop || ev.At.Before(opened) {
		return nil
	}
	n, ok := notify.For(ev)
	if !ok {
		return nil
	}
	for _, tv := range tasks {
		if tv.Task.ID == ev.TaskID {
			n.Title = tv.Task.Title
		}
	}
	return tea.Raw(notify.Terminal(n, opt.Bell, opt.Desktop))
}

// do sends an operator command through the engine and reports its result.
func (m *Model) do(c coord.Command) tea.Cmd {
	if c.Author == "" {
		c.Author = m.opt.Author
	}
	m.pending++
	m.note = BannerMsg{} // the last command's note has been read
	m.setStatus(describe(c)+"…", true)
	e := m.eng
	return tea.Batch(func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		res, err := e.Do(ctx, c)
		return doneMsg{cmd: c, res: res, err: err}
	}, m.armSpin())
}

func (m *Model) handleDone(msg doneMsg) tea.Cmd {
	m.pending = max(m.pending-1, 0)
	switch {
	case msg.err != nil:
		text := fmt.Sprintf("%s failed: %v", describe(msg.cmd), msg.err)
		if id := msg.cmd.TaskID.Short(); id != "" && strings.Contains(msg.err.Error(), id) {
			// The engine's refusal names the move and the task ("cannot
			// approve task K7QF2M1A: it is completed, …"): said once, the
			// reason fits an 80-column status line.
			text = msg.err.Error()
		}
		m.setStatus(text, false)
		// Bring back the form a refused add or resume came from, with
		// what was typed and the whole reason (reopens).
		if msg.reopens(m.mode, m.form.resume) {
			m.mode = modeForm
			m.form.err = msg.err.Error()
		}
	case msg.cmd.Kind == coord.CmdApprove && msg.res.Message != "":
		// Where the work is and how to merge it: a sentence to read
		// whole, not a status line cut at the width.
		m.setStatus(describe(msg.cmd)+": done", true)
		next := "M merges it"
		if strings.Contains(msg.res.Message, "queued for merge") {
			// The merge queue has it ([finalise] queue): M would be refused.
			next = "the merge queue lands it"
		}
		m.note = BannerMsg{Title: "APPROVED " + msg.cmd.TaskID.Short() + " · " + next + " · esc dismisses this", Tone: ToneOK, Lines: []string{msg.res.Message}}
	case msg.res.Message != "":
		// The engine's message may not say which task it is about ("queued
		// again for phase implement"); the status line names it.
		text := msg.res.Message
		if id := msg.cmd.TaskID.Short(); id != "" && !strings.Contains(text, id) {
			text = describe(msg.cmd) + ": " + text
		}
		m.setStatus(text, true)
	default:
		m.setStatus(describe(msg.cmd)+": done", true)
	}
	// relayout: a note may have come or gone, and the panes above it with
	// it.
	cmd := tea.Batch(m.refresh(), m.relayout())
	created := msg.cmd.Kind == coord.CmdAdd || msg.cmd.Kind == coord.CmdResume
	if created && msg.err == nil && msg.res.TaskID != "" {
		// The operator wants to see what they just made: list everything,
		// and select it now, or as soon as the snapshot has it.
		m.tasks.filter, m.tasks.search.query = filterAll, ""
		m.tasks.searchIn.SetValue("")
		m.tasks.rebuild(m.now())
		m.wantSel = msg.res.TaskID
		m.fixSelection()
		cmd = tea.Batch(cmd, m.relayout(), m.selectionChanged())
	} else if m.selID != "" {
		cmd = tea.Batch(cmd, m.fetchDetail())
	}
	return cmd
}

// reopens says whether to bring back the form a refused add or resume came from, with
// what was typed and the whole reason, wrapped: the status bar has one line,
// and the reason (a field of the handoff file, an unknown harness) is what
// the operator needs to fix it. Only when nothing else was started since.
func (msg doneMsg) reopens(md mode, resume bool) bool {
	created := msg.cmd.Kind == coord.CmdAdd || msg.cmd.Kind == coord.CmdResume
	return created && md == modeNormal && resume == (msg.cmd.Kind == coord.CmdResume)
}

// describe names a command for the status bar.
func describe(c coord.Command) string {
	id := c.TaskID.Short()
	switch c.Kind {
	case coord.CmdAdd:
		title := ""
		if c.Task != nil {
			title = c.Task.Title
		}
		return fmt.Sprintf("add %q", title)
	case coord.CmdResume:
		return fmt.Sprintf("resume from %q", c.Path)
	case coord.CmdExtend:
		return fmt.Sprintf("extend %s by %s", id, shortDuration(c.Duration))
	}
	return string(c.Kind) + " " + id
}

// shortDuration is d as an operator types it: "10m", not "10m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// armSpin keeps the status spinner turning while a command is in flight;
// with NoAnim there is no spinner and so no timer.
func (m *Model) armSpin() tea.Cmd {
	if m.opt.NoAnim || m.spinArmed || m.pending == 0 {
		return nil
	}
	m.spinArmed = true
	return m.tick(100*time.Millisecond, func(time.Time) tea.Msg { return spinTickMsg{} })
}

// inputQueue keeps typed bytes in order: tea.Cmds run concurrently, so at
// most one write is in flight and keys typed meanwhile are sent together
// after it.
type inputQueue struct {
	id       task.ID
	buf      []byte
	inflight bool
}

// send queues b for task id's pane and sends it through engine e unless a
// write is in flight.
func (q *inputQueue) send(e coord.Engine, id task.ID, b []byte) tea.Cmd {
	if len(b) == 0 {
		return nil
	}
	if q.id != id {
		q.buf = nil
	}
	q.id = id
	q.buf = append(q.buf, b...)
	return q.flush(e)
}

// flush sends what was typed since the last write, once none is in flight.
func (q *inputQueue) flush(e coord.Engine) tea.Cmd {
	if q.inflight || len(q.buf) == 0 {
		return nil
	}
	id, b := q.id, q.buf
	q.buf = nil
	q.inflight = true
	return func() tea.Msg {
		if err := e.Input(id, b); err != nil {
			return inputDoneMsg{err: fmt.Errorf("typing into %s: %w", id.Short(), err)}
		}
		return inputDoneMsg{}
	}
}

// forget drops cached screens and sizes of sessions that ended, so a long
// run does not keep every pane it ever drew.
func (pg *paneGrid) forget(tasks []coord.TaskView) {
	live := map[task.ID]bool{}
	for _, tv := range tasks {
		if isLive(tv) {
			live[tv.Task.ID] = true
		}
	}
	for id := range pg.paneCache {
		if !live[id] {
			delete(pg.paneCache, id)
		}
	}
	for id := range pg.paneSizes {
		if !live[id] {
			delete(pg.paneSizes, id)
			delete(pg.paneTook, id)
		}
	}
}
