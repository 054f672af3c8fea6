package ui

import (
	"fmt"
	"slices"
	"time"

	"charm.land/bubbles/v2/key"
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
		return m.focusKey(msg)
	case modeScroll:
		return m.scrollKey(msg)
	case modeForm:
		return m.formKey(msg)
	case modeCorrect:
		return m.correctKey(msg)
	case modeConfirm:
		return m.confirmKey(msg)
	case modeSearch:
		return m.searchKey(msg)
	case modeDiff:
		return m.browseKey(msg)
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
	if m.pendingG {
		return m.secondG(msg)
	}
	k := m.keys
	tv, ok := m.selected()
	if m.tab == tabDiff {
		if cmd, took := m.diffTabKey(msg); took {
			return cmd
		}
	}
	switch {
	case key.Matches(msg, k.down):
		hold := m.holdOrder()
		if m.moveSelection(1) {
			return tea.Batch(hold, m.selectionChanged())
		}
		return hold
	case key.Matches(msg, k.up):
		hold := m.holdOrder()
		if m.moveSelection(-1) {
			return tea.Batch(hold, m.selectionChanged())
		}
		return hold
	case key.Matches(msg, k.filter):
		before := m.selID
		m.filter = (m.filter + 1) % filterCount
		m.rebuildList()
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
		return m.startG()
	case key.Matches(msg, k.top):
		return m.selectEdge(false)
	case key.Matches(msg, k.bottom):
		return m.selectEdge(true)
	case key.Matches(msg, k.search):
		return m.openSearch()
	case msg.String() == "esc" && m.note.Title != "":
		cmd, _ := m.dismissNote()
		return cmd
	case msg.String() == "esc" && m.search.query != "":
		return m.clearSearch()
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
		return tea.Sequence(m.syncPaneSizes(), m.resizer.focus(m.eng, tv.Task.ID))
	case key.Matches(msg, k.scroll):
		if m.tab != tabLive {
			m.activeViewport().PageUp()
			return nil
		}
		if !ok || !isLive(tv) || m.grid {
			return nil
		}
		m.mode = modeScroll
		m.scrollOff = 0
		if msg.String() == "pgup" {
			m.scrollOff = max(m.layout().contentH-1, 1)
		}
	case key.Matches(msg, k.pageDown):
		if m.tab != tabLive {
			m.activeViewport().PageDown()
		}
	case msg.String() == "J" || msg.String() == "K":
		if vp := m.activeViewport(); vp != nil && m.tab != tabLive {
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
		if m.detailID == tv.Task.ID {
			sessions = m.detail.Sessions
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
		return m.askStop()
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
		m.correct.Reset()
		return m.correct.Focus()
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

func (m *Model) activeViewport() *viewport.Model {
	switch m.tab {
	case tabBrief:
		return &m.brief
	case tabVerdict:
		return &m.verdicts
	case tabEvents:
		return &m.events
	}
	return &m.brief
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
	n := m.liveCount()
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

func (m *Model) confirmKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "y", "Y":
		yes := m.confirm.yes
		m.confirm = confirmation{}
		m.mode = modeNormal
		return yes()
	case "n", "N", "esc", "q", "ctrl+c":
		declined := m.confirm.declined
		m.confirm = confirmation{}
		m.mode = modeNormal
		m.setStatus(declined, true)
	default:
		// A stray key neither answers nor is lost in silence.
		m.setStatus(msg.String()+" does not answer: y to go ahead, n or esc to cancel", true)
	}
	return nil
}

// focusKey sends every key to the agent except the leave-focus key.
func (m *Model) focusKey(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == m.opt.LeaveFocusKey || msg.Keystroke() == m.opt.LeaveFocusKey {
		m.mode = modeNormal
		m.zoom = false
		return m.syncPaneSizes() // a zoomed pane goes back to its place
	}
	return m.sendInput(m.selID, keyBytesIn(msg, m.paneModes(m.selID)))
}

func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	switch m.mode {
	case modeFocus:
		return m.sendInput(m.selID, pasteBytesIn(msg.Content, m.paneModes(m.selID)))
	case modeForm:
		return m.form.update(msg)
	case modeCorrect:
		var cmd tea.Cmd
		m.correct, cmd = m.correct.Update(msg)
		return cmd
	case modeSearch:
		var cmd tea.Cmd
		m.searchIn, cmd = m.searchIn.Update(msg)
		return tea.Batch(cmd, m.setSearch(m.searchIn.Value()))
	}
	return nil
}

// scrollKey moves through the pane's history.
func (m *Model) scrollKey(msg tea.KeyPressMsg) tea.Cmd {
	page := max(m.layout().contentH-1, 1)
	switch msg.String() {
	case "pgup", "b":
		m.scrollOff += page
	case "pgdown", "space", "f":
		m.scrollOff = max(m.scrollOff-page, 0)
	case "up", "k":
		m.scrollOff++
	case "down", "j":
		m.scrollOff = max(m.scrollOff-1, 0)
	case "home", "g":
		m.scrollOff = 1 << 30
	case "end", "G":
		m.scrollOff = 0
	case "esc", "q", "s":
		m.mode = modeNormal
		m.scrollOff = 0
	}
	return nil
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

func (m *Model) correctKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.mode = correctLeavesTo(m.dv.anchor)
		m.correct.Blur()
		m.dv.anchor = nil
		return nil
	case "enter":
		text := m.correct.Value()
		if text == "" {
			what := "correction"
			if m.dv.anchor != nil {
				what = "comment"
			}
			m.setStatus("the "+what+" is empty; type it or press esc", false)
			return nil
		}
		m.mode = correctLeavesTo(m.dv.anchor)
		m.correct.Blur()
		anchor := m.dv.anchor
		m.dv.anchor = nil
		return m.do(coord.Command{Kind: coord.CmdCorrect, TaskID: m.selID, Text: text, Anchor: anchor})
	}
	var cmd tea.Cmd
	m.correct, cmd = m.correct.Update(msg)
	return cmd
}
