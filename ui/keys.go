package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// extendBy is how much the extend key adds to a lease.
const extendBy = 10 * time.Minute

// keyMap is every key of normal mode, with the help text the help screen
// shows. Focus, scroll, form and confirm modes read keys directly.
type keyMap struct {
	down, up, filter, nextTab, prevTab, tab1, tab2, tab3, tab4, tab5 key.Binding
	grid, top, bottom, search, focus, zoom, scroll, pageDown         key.Binding
	add, correct, resubmit, extend, expire, cancel, park             key.Binding
	approve, help, quit, stop                                        key.Binding
	merge, retry, requestChanges, replay                             key.Binding
	leave                                                            key.Binding
}

func newKeyMap(leave string) keyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		down:           b([]string{"j", "down"}, "j/↓", "select the next task"),
		up:             b([]string{"k", "up"}, "k/↑", "select the previous task"),
		filter:         b([]string{"f"}, "f", "cycle all/live/attention/ended"),
		nextTab:        b([]string{"tab"}, "tab", "next tab (Live, Brief, Verdict, Events, Diff)"),
		prevTab:        b([]string{"shift+tab"}, "shift+tab", "previous tab"),
		tab1:           b([]string{"1"}, "1", "Live tab: the agent's terminal"),
		tab2:           b([]string{"2"}, "2", "Brief tab: the exact brief the session got"),
		tab3:           b([]string{"3"}, "3", "Verdict tab: test result, output tail, history"),
		tab4:           b([]string{"4"}, "4", "Events tab: the task's ledger"),
		tab5:           b([]string{"5"}, "5", "Diff tab: what the branch changed"),
		grid:           b([]string{"g"}, "g", "grid of the live sessions"),
		top:            b([]string{"home"}, "g g/home", "select the first task"),
		bottom:         b([]string{"G", "end"}, "G/end", "select the last task"),
		search:         b([]string{"/"}, "/", "filter by text (esc clears)"),
		focus:          b([]string{"enter", "i"}, "enter/i", "focus: type into the agent"),
		zoom:           b([]string{"z"}, "z", "focus on the whole screen"),
		scroll:         b([]string{"s", "pgup"}, "s/pgup", "scroll back / up the tab"),
		pageDown:       b([]string{"pgdown"}, "pgdn", "scroll the tab down"),
		add:            b([]string{"n"}, "n", "new task · ctrl+r resumes"),
		correct:        b([]string{"c"}, "c", "correct: a human decision"),
		resubmit:       b([]string{"r"}, "r", "resubmit the stuck pane"),
		extend:         b([]string{"e"}, "e", "extend the lease by 10m"),
		expire:         b([]string{"x"}, "x", "expire the lease now (asks)"),
		cancel:         b([]string{"D"}, "D", "cancel the task (asks first)"),
		park:           b([]string{"p"}, "p", "park / unpark (asks if live)"),
		approve:        b([]string{"a"}, "a", "approve a task awaiting review"),
		requestChanges: b([]string{"C"}, "C", "request changes (comments)"),
		merge:          b([]string{"M"}, "M", "merge its branch (asks first)"),
		retry:          b([]string{"R"}, "R", "retry a failed/cancelled task"),
		replay:         b([]string{"w"}, "w", "replay the session's recording"),
		help:           b([]string{"?"}, "?", "this help"),
		quit:           b([]string{"q", "ctrl+c"}, "q", "quit (asks if it stops agents)"),
		stop:           b([]string{"Q"}, "Q", "stop engine and agents (asks)"),
		leave:          b([]string{leave}, leave, "leave focus"),
	}
}

// helpGroups orders the key map for the help screen. Keys that go in
// pairs or runs (j/k, the tabs, first/last) share one line, so every key
// and its whole description fit at 80x24.
func (k keyMap) helpGroups() []helpGroup {
	h := func(keys, desc string) key.Binding { return key.NewBinding(key.WithHelp(keys, desc)) }
	console := []key.Binding{k.help, k.quit, k.stop}
	return []helpGroup{
		{"Navigate", []key.Binding{
			h("j/k ↓/↑", "next / previous task"),
			h("gg/G", "first / last task (home/end)"),
			k.filter, k.search,
			h("tab/1-5", "Live Brief Verdict Events Diff"),
		}},
		{"Diff tab", diffHelp()},
		{"Replay", replayHelp()},
		{"Panes", []key.Binding{k.grid, k.focus, k.zoom, k.leave, k.scroll, k.pageDown}},
		{"Act on the selected task", []key.Binding{k.add, k.correct, k.resubmit, k.extend, k.expire, k.cancel, k.park, k.approve, k.requestChanges, k.merge, k.retry}},
		{"Console", console},
	}
}

type helpGroup struct {
	title string
	keys  []key.Binding
}

// confirmation is a pending y/n question, what yes does, and what the
// status says when the answer is no: what was left undone.
type confirmation struct {
	prompt   string
	declined string
	yes      func() tea.Cmd
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	switch m.mode {
	case modeFocus:
		// Every key goes to the agent but the leave-focus key.
		if msg.String() == m.opt.LeaveFocusKey || msg.Keystroke() == m.opt.LeaveFocusKey {
			m.mode = modeNormal
			m.zoom = false
			return m.syncPaneSizes() // a zoomed pane goes back to its place
		}
		return m.input.send(m.eng, m.selID, keyBytesIn(msg, m.panes.modes(m.selID)))
	case modeScroll:
		if m.panes.scrollKey(msg.String(), max(m.layout().contentH-1, 1)) {
			m.mode = modeNormal
		}
		return nil
	case modeForm:
		cmd, c, leave := m.form.key(msg)
		if leave {
			m.mode = modeNormal
		}
		if c != nil {
			return m.do(*c)
		}
		return cmd
	case modeCorrect:
		cmd, r := m.correct.key(msg)
		if r.problem != "" {
			m.setStatus(r.problem, false)
			return nil
		}
		if r.leave {
			m.mode = r.mode
		}
		if r.text != "" {
			return m.do(coord.Command{Kind: coord.CmdCorrect, TaskID: m.selID, Text: r.text, Anchor: r.anchor})
		}
		return cmd
	case modeConfirm:
		yes, answered, status := m.confirm.answer(msg.String())
		if answered {
			m.mode = modeNormal
		}
		if status != "" {
			m.setStatus(status, true)
		}
		if yes != nil {
			return yes()
		}
		return nil
	case modeSearch:
		cmd, leave := m.tasks.searchKey(msg)
		if leave {
			m.mode = modeNormal
		}
		return tea.Batch(cmd, m.setSearch(m.tasks.searchIn.Value()))
	case modeDiff:
		cmd, _ := m.diffKey(msg, true)
		return cmd
	case modeReplay:
		cmd, leave := m.rp.key(msg)
		if leave {
			m.mode, m.rp = modeNormal, nil
		}
		return cmd
	case modeHelp:
		// Any key closes help; it should never trap the operator.
		m.mode = modeNormal
		return m.syncPaneSizes()
	}
	return m.normalKey(msg)
}

func (m *Model) normalKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.g.pending {
		// The key after g.
		m.g.pending = false
		if msg.String() == "g" {
			return m.step(-toEdge)
		}
		return tea.Batch(m.toggleGrid(), m.normalKey(msg))
	}
	k := m.keys
	tv, ok := m.selected()
	if m.tab == tabDiff {
		if cmd, took := m.diffKey(msg, false); took {
			return cmd
		}
	}
	switch {
	case key.Matches(msg, k.down):
		return m.step(1)
	case key.Matches(msg, k.up):
		return m.step(-1)
	case key.Matches(msg, k.filter):
		before := m.selID
		m.tasks.filter = (m.tasks.filter + 1) % filterCount
		m.tasks.rebuild(m.now())
		m.fixSelection()
		cmd := m.relayout()
		if m.selID != before {
			cmd = tea.Batch(cmd, m.selectionChanged())
		}
		return cmd
	case key.Matches(msg, k.nextTab):
		return m.setTab((m.tab + 1) % tab(len(tabNames)))
	case key.Matches(msg, k.prevTab):
		return m.setTab((m.tab + tab(len(tabNames)) - 1) % tab(len(tabNames)))
	case key.Matches(msg, k.tab1):
		return m.setTab(tabLive)
	case key.Matches(msg, k.tab2):
		return m.setTab(tabBrief)
	case key.Matches(msg, k.tab3):
		return m.setTab(tabVerdict)
	case key.Matches(msg, k.tab4):
		return m.setTab(tabEvents)
	case key.Matches(msg, k.tab5):
		return m.setTab(tabDiff)
	case key.Matches(msg, k.grid):
		// g is also the first half of g g (the first task): wait a
		// moment for a second g before toggling the grid.
		timeout := m.g.start()
		return m.tick(gWait, func(time.Time) tea.Msg { return timeout })
	case key.Matches(msg, k.top):
		return m.step(-toEdge)
	case key.Matches(msg, k.bottom):
		return m.step(toEdge)
	case key.Matches(msg, k.search):
		// The / line opens with the current text.
		m.mode = modeSearch
		m.tasks.searchIn.SetValue(m.tasks.search.query)
		m.tasks.searchIn.CursorEnd()
		return m.tasks.searchIn.Focus()
	case msg.String() == "esc" && m.note.Title != "":
		m.note = BannerMsg{} // the note comes down
		return m.relayout()
	case msg.String() == "esc" && m.tasks.search.query != "":
		m.tasks.searchIn.SetValue("")
		return m.setSearch("")
	case key.Matches(msg, k.focus, k.zoom):
		if !ok || !isLive(tv) {
			m.setStatus("nothing to focus: the selected task has no live session", false)
			return nil
		}
		m.mode = modeFocus
		m.focusSession = tv.SessionID
		m.zoom = key.Matches(msg, k.zoom)
		if !m.grid {
			m.tab = tabLive
		}
		return tea.Sequence(m.syncPaneSizes(), m.panes.resizer.focus(m.eng, tv.Task.ID))
	case key.Matches(msg, k.scroll):
		if m.tab != tabLive {
			m.tabs.viewport(m.tab).PageUp()
			return nil
		}
		if !ok || !isLive(tv) || m.grid {
			return nil
		}
		m.mode = modeScroll
		m.panes.scrollOff = 0
		if msg.String() == "pgup" {
			m.panes.scrollOff = max(m.layout().contentH-1, 1)
		}
	case key.Matches(msg, k.pageDown):
		if m.tab != tabLive {
			m.tabs.viewport(m.tab).PageDown()
		}
	case msg.String() == "J" || msg.String() == "K":
		if vp := m.tabs.viewport(m.tab); vp != nil && m.tab != tabLive {
			if msg.String() == "J" {
				vp.ScrollDown(1)
			} else {
				vp.ScrollUp(1)
			}
		}
	case key.Matches(msg, k.add):
		m.mode = modeForm
		return m.form.open()
	case key.Matches(msg, k.replay):
		if !ok {
			m.setStatus("no task selected", false)
			return nil
		}
		var sessions []store.Session
		if m.tabs.detailID == tv.Task.ID {
			sessions = m.tabs.detail.Sessions
		}
		var load tea.Cmd
		m.rp, load = openReplay(m.eng, &m.st, m.now, m.tick, tv.Task.ID, "", sessions)
		m.mode, m.tab, m.grid = modeReplay, tabLive, false
		return tea.Batch(load, m.relayout())
	case key.Matches(msg, k.help):
		m.mode = modeHelp
	case key.Matches(msg, k.quit):
		return m.askQuit()
	case key.Matches(msg, k.stop):
		if m.opt.StopEngine == nil {
			return m.askQuit() // in-process, quitting is what stops the engine and its agents
		}
		m.ask(stopQuestion(liveCount(m.snap.Tasks)), "not stopped: the engine and its agents go on", func() tea.Cmd {
			m.setStatus("stopping the engine and every agent…", false)
			return stopEngine(m.opt.StopEngine)
		})
		return nil
	default:
		return m.actionKey(msg, tv, ok)
	}
	return nil
}

// actionKey handles the keys that become commands for the selected task.
func (m *Model) actionKey(msg tea.KeyPressMsg, tv coord.TaskView, ok bool) tea.Cmd {
	k := m.keys
	if !key.Matches(msg, k.correct, k.resubmit, k.extend, k.expire, k.cancel, k.park, k.approve, k.requestChanges, k.merge, k.retry) {
		return nil
	}
	if !ok {
		m.setStatus("no task selected", false)
		return nil
	}
	id := tv.Task.ID
	switch {
	case key.Matches(msg, k.correct):
		m.mode = modeCorrect
		m.correct.in.Reset()
		return m.correct.in.Focus()
	case key.Matches(msg, k.resubmit):
		return m.do(coord.Command{Kind: coord.CmdResubmit, TaskID: id})
	case key.Matches(msg, k.extend):
		return m.do(coord.Command{Kind: coord.CmdExtend, TaskID: id, Duration: extendBy})
	case key.Matches(msg, k.expire):
		// Destructive: the live session is stopped. Ask first.
		if !isLive(tv) {
			m.setStatus(fmt.Sprintf("nothing to expire: %s has no live lease", id.Short()), false)
			return nil
		}
		prompt := fmt.Sprintf("Expire the lease of %s %q now? Its session is stopped and the task requeued with a continuity brief; the attempt counts. y/n", id.Short(), tv.Task.Title)
		m.ask(prompt, "not expired: "+id.Short()+" keeps its lease", func() tea.Cmd { return m.do(coord.Command{Kind: coord.CmdExpire, TaskID: id}) })
	case key.Matches(msg, k.park):
		if tv.Task.State == task.StateParked {
			return m.do(coord.Command{Kind: coord.CmdUnpark, TaskID: id})
		}
		if !isLive(tv) {
			return m.do(coord.Command{Kind: coord.CmdPark, TaskID: id})
		}
		// Parking a running task stops its session: ask first.
		prompt := fmt.Sprintf("Park %s %q? Its session is stopped and the task waits until p unparks it (its worktree is kept). y/n", id.Short(), tv.Task.Title)
		m.ask(prompt, "not parked: "+id.Short()+" keeps running", func() tea.Cmd { return m.do(coord.Command{Kind: coord.CmdPark, TaskID: id}) })
	case key.Matches(msg, k.approve):
		return m.do(coord.Command{Kind: coord.CmdApprove, TaskID: id})
	case key.Matches(msg, k.retry):
		return m.do(coord.Command{Kind: coord.CmdRetry, TaskID: id})
	case key.Matches(msg, k.requestChanges):
		return m.do(coord.Command{Kind: coord.CmdRequestChanges, TaskID: id})
	case key.Matches(msg, k.merge):
		if why := noMerge(tv); why != "" {
			m.setStatus(why, false)
			return nil
		}
		prompt := fmt.Sprintf("Merge task %s's branch %s into the checked-out branch? y/n", id.Short(), tv.Task.Branch)
		m.ask(prompt, "not merged: "+id.Short()+"'s branch is left as it is", func() tea.Cmd { return m.do(coord.Command{Kind: coord.CmdMerge, TaskID: id}) })
	case key.Matches(msg, k.cancel):
		if !slices.Contains(task.Allowed(tv.Task.State), task.ActCancel) {
			// Asking would only lead to a refusal.
			m.setStatus(fmt.Sprintf("nothing to cancel: %s is %s", id.Short(), tv.Task.State), false)
			return nil
		}
		prompt := fmt.Sprintf("Cancel task %s %q? Its session is stopped; the work in its worktree is kept. y/n", id.Short(), tv.Task.Title)
		m.ask(prompt, "not cancelled: "+id.Short()+" goes on", func() tea.Cmd { return m.do(coord.Command{Kind: coord.CmdCancel, TaskID: id}) })
	}
	return nil
}

func (m *Model) setTab(t tab) tea.Cmd {
	m.tab = t
	m.refreshTabs()
	var leave tea.Cmd
	if m.grid {
		// The grid shows no tabs: a tab key leaves it for that tab, rather
		// than switching one nobody sees (whose keys, the Diff tab's
		// enter, would then act unseen).
		leave = m.toggleGrid()
	}
	if t == tabDiff {
		return tea.Batch(leave, m.fetchDiff(), m.syncPaneSizes())
	}
	return tea.Batch(leave, m.syncPaneSizes())
}

// viewport is the scrollable viewport of tab t (the Brief's for a tab
// without one).
func (dt *detailTabs) viewport(t tab) *viewport.Model {
	switch t {
	case tabBrief:
		return &dt.brief
	case tabVerdict:
		return &dt.verdicts
	case tabEvents:
		return &dt.events
	}
	return &dt.brief
}

func containsTask(tvs []coord.TaskView, id task.ID) bool {
	for _, tv := range tvs {
		if tv.Task.ID == id {
			return true
		}
	}
	return false
}

func (m *Model) ask(prompt, declined string, yes func() tea.Cmd) {
	m.confirm = confirmation{prompt: prompt, declined: declined, yes: yes}
	m.mode = modeConfirm
}

// askQuit quits at once when nothing runs and asks first when sessions do,
// saying what quitting does to them.
func (m *Model) askQuit() tea.Cmd {
	n := liveCount(m.snap.Tasks)
	if n == 0 || m.opt.Detach {
		return tea.Quit
	}
	noun, them, their, tasks := "sessions are", "them", "their", "tasks"
	if n == 1 {
		noun, them, their, tasks = "session is", "it", "its", "task"
	}
	m.ask(fmt.Sprintf("%d %s running; quitting stops %s and requeues %s %s (%s work in the worktree is kept). Quit? y/n", n, noun, them, their, tasks, their),
		"not quit: the console stays", func() tea.Cmd { return tea.Quit })
	return nil
}

// answer takes key k in answer to the question: yes (what yes does, to
// run) or no end it (answered); status is what the status line says.
func (c *confirmation) answer(k string) (yes func() tea.Cmd, answered bool, status string) {
	switch k {
	case "y", "Y":
		yes = c.yes
		*c = confirmation{}
		return yes, true, ""
	case "n", "N", "esc", "q", "ctrl+c":
		declined := c.declined
		*c = confirmation{}
		return nil, true, declined
	}
	// A stray key neither answers nor is lost in silence.
	return nil, false, k + " does not answer: y to go ahead, n or esc to cancel"
}

func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	switch m.mode {
	case modeFocus:
		return m.input.send(m.eng, m.selID, pasteBytesIn(msg.Content, m.panes.modes(m.selID)))
	case modeForm:
		return m.form.update(msg)
	case modeCorrect:
		var cmd tea.Cmd
		m.correct.in, cmd = m.correct.in.Update(msg)
		return cmd
	case modeSearch:
		var cmd tea.Cmd
		m.tasks.searchIn, cmd = m.tasks.searchIn.Update(msg)
		return tea.Batch(cmd, m.setSearch(m.tasks.searchIn.Value()))
	}
	return nil
}

// scrollKey moves through the pane's history a line or a page at a time;
// it reports whether the key leaves scroll mode.
func (pg *paneGrid) scrollKey(k string, page int) (leave bool) {
	switch k {
	case "pgup", "b":
		pg.scrollOff += page
	case "pgdown", "space", "f":
		pg.scrollOff = max(pg.scrollOff-page, 0)
	case "up", "k":
		pg.scrollOff++
	case "down", "j":
		pg.scrollOff = max(pg.scrollOff-1, 0)
	case "home", "g":
		pg.scrollOff = 1 << 30
	case "end", "G":
		pg.scrollOff = 0
	case "esc", "q", "s":
		pg.scrollOff = 0
		return true
	}
	return false
}

// correction is the correction input (c), or from the Diff tab the
// comment on one line of the diff (anchor), over the bottom of the body.
type correction struct {
	in     textinput.Model
	anchor *store.Anchor // the line a comment is on; nil for a correction
}

// correctResult is what a key did to the correction: leave closes it
// (back to mode), with text to send on anchor (none for esc); problem
// says why enter sent nothing.
type correctResult struct {
	leave   bool
	mode    mode
	text    string
	anchor  *store.Anchor
	problem string
}

// correctLeavesTo is the mode the correction input returns to: a comment
// was opened from the diff's browse mode, which goes on where it was, for
// the next comment.
func correctLeavesTo(anchor *store.Anchor) mode {
	if anchor != nil {
		return modeDiff
	}
	return modeNormal
}

// key takes a key typed into the correction.
func (c *correction) key(msg tea.KeyPressMsg) (tea.Cmd, correctResult) {
	switch msg.String() {
	case "esc":
		back := correctLeavesTo(c.anchor)
		c.in.Blur()
		c.anchor = nil
		return nil, correctResult{leave: true, mode: back}
	case "enter":
		text := c.in.Value()
		if text == "" {
			what := "correction"
			if c.anchor != nil {
				what = "comment"
			}
			return nil, correctResult{problem: "the " + what + " is empty; type it or press esc"}
		}
		c.in.Blur()
		anchor := c.anchor
		c.anchor = nil
		return nil, correctResult{leave: true, mode: correctLeavesTo(anchor), text: text, anchor: anchor}
	}
	var cmd tea.Cmd
	c.in, cmd = c.in.Update(msg)
	return cmd, correctResult{}
}

// panel is the correction over the bottom of the body, w wide, for the
// task id.
func (c *correction) panel(st styles, id task.ID, w int) []string {
	// The hint line below says enter sends and esc cancels.
	label, note := "CORRECT "+id.Short(), "a human decision: it reaches the live agent once and outranks the plan in every later brief"
	if a := c.anchor; a != nil {
		label, note = "COMMENT "+id.Short()+" on "+ansiSafe(a.Where()), "a human decision at this line: it reaches the live agent once and goes into every later brief"
	}
	out := []string{st.sep.Render(strings.Repeat("─", w))}
	out = append(out, promptLines(st, label, note, w)...)
	return append(out, fit(c.in.View(), w))
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

// panel is the question over the bottom of the body, w wide.
func (c *confirmation) panel(st styles, w int) []string {
	out := []string{st.sep.Render(strings.Repeat("─", w))}
	for _, l := range wrap(c.prompt, w) {
		out = append(out, st.prompt.Render(fit(l, w)))
	}
	return out
}
