// Package ui is the operator console: one root bubbletea model that reads
// engine snapshots, pulls session screens at frame time and turns every key
// that changes something into a coord.Command. It never edits task state.
//
// The root Model only routes: Update dispatches messages, keys.go says what
// a key does in each mode, commands.go makes engine calls tea.Cmds and
// takes their results, layout.go computes the frame's geometry. Each
// concern is a component that owns its state, is handed a narrow view of
// what it needs (the snapshot's tasks, the selected task, the clock) and
// renders into exactly the width and height it is given: taskList (the
// list, its order hold and the / line), paneGrid (the Live tab's pane,
// scroll mode and the grid), detailTabs (the Brief, Verdict and Events tabs
// and the followed ledgers), diffView (the Diff tab), stripView (the task
// header, tab bar, lease and verdict strips), newTaskForm, correction and
// confirmation (the forms), footer (status and hints) and helpScreen.
package ui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Options configure the console.
type Options struct {
	// NoAnim turns off spinners and repainting status text, for recordings
	// and CI: every frame is stable text.
	NoAnim bool
	// Now is the clock; nil means time.Now. Tests fix it.
	Now func() time.Time
	// LeaveFocusKey leaves focus mode; empty means "ctrl+]". Every other key
	// goes to the agent while focused.
	LeaveFocusKey string
	// RepoName is shown in the header.
	RepoName string
	// Author is recorded on corrections and other commands.
	Author string
	// Harnesses are the harnesses the new-task form lists.
	Harnesses []HarnessInfo
	// Bell rings the terminal bell, and Desktop sends a desktop
	// notification (OSC 9 and OSC 777), when a task comes to need a human.
	Bell, Desktop bool
	// Detach says the console is attached to an engine that runs on its
	// own: quitting detaches at once and every agent keeps running.
	Detach bool
	// StopEngine, when set, stops the engine and every agent; the stop key
	// (Q) asks first, then calls it and quits.
	StopEngine func(ctx context.Context) error
}

// DefaultLeaveFocusKey is the key that leaves focus mode unless Options says
// otherwise. Agents rarely bind it, unlike ctrl+c, esc or ctrl+d.
const DefaultLeaveFocusKey = "ctrl+]"

// leaseTick is how often lease timers repaint while a lease is live.
const leaseTick = time.Second

// statusTTL is how long a transient status message stays up.
const statusTTL = 8 * time.Second

type mode int

const (
	modeNormal  mode = iota
	modeFocus        // keys go to the agent
	modeScroll       // browsing the pane's scrollback
	modeForm         // the new-task form
	modeCorrect      // the correction input
	modeConfirm      // a y/n question
	modeHelp         // the help screen
	modeSearch       // the / line that filters the list by text
	modeDiff         // browsing the Diff tab: j/k move its cursor line
	modeReplay       // playing a session's recording in the Live tab (replay.go)
)

type tab int

const (
	tabLive tab = iota
	tabBrief
	tabVerdict
	tabEvents
	tabDiff
)

var tabNames = []string{"Live", "Brief", "Verdict", "Events", "Diff"}

// Model is the console's root tea.Model.
type Model struct {
	eng  coord.Engine
	opt  Options
	now  func() time.Time
	st   styles
	keys keyMap

	width, height int
	opened        time.Time // when the console opened: older events ring no bell

	snap  coord.Snapshot
	tasks taskList // the task list (tasklist.go)
	g     gKey     // the wait for a second g (listnav.go)
	// wantSel is a task the operator just made, selected as soon as the
	// snapshot lists it; focusSession is the session focus mode types into.
	wantSel      task.ID
	focusSession string
	selID        task.ID
	tab          tab
	grid         bool
	mode         mode
	zoom         bool // in focus mode: the pane has the whole terminal but the status line

	tabs detailTabs // the Brief, Verdict and Events tabs (detail.go)

	panes paneGrid // the Live tab's pane, scroll mode and the grid (pane.go)

	dv diffView // the Diff tab (diff.go)
	rp *replay  // the replay in modeReplay (replay.go), nil otherwise

	form    newTaskForm
	correct correction // the correction input (keys.go)
	confirm confirmation

	banner   BannerMsg // set from outside (the demo); see BannerMsg
	note     BannerMsg // the console's own note: the approve message
	status   string
	statusOK bool
	statusAt time.Time
	pending  int // commands in flight
	spin     int

	input      inputQueue
	leaseArmed bool
	spinArmed  bool

	// tick schedules a timer message; tests replace it so a synchronous
	// driver never waits on a real clock.
	tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
}

// New builds the console over an engine.
func New(e coord.Engine, o Options) *Model {
	if o.LeaveFocusKey == "" {
		o.LeaveFocusKey = DefaultLeaveFocusKey
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	m := &Model{
		eng:    e,
		opt:    o,
		now:    now,
		opened: now(),
		st:     newStyles(),
		tick:   tea.Tick,
	}
	m.panes = newPaneGrid(m.st, e.Pane, func() time.Time { return m.now() })
	// The tabs read the console's clock, which tests may set after New.
	m.tabs = newDetailTabs(m.st, func() time.Time { return m.now() })
	m.keys = newKeyMap(o.LeaveFocusKey)
	if o.Detach {
		m.keys.quit.SetHelp("q", "detach: the agents keep running")
	}
	m.form = newTaskFormModel()
	m.tasks.searchIn = newSearchInput()
	m.correct = correction{in: newInput("correction: ", "what the agent should do differently")}
	m.setSnap(e.Snapshot())
	m.fixSelection()
	return m
}

// Init fetches the selected task's detail and starts the lease clock.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.fetchDetail(), m.armLeaseTick())
}

// Update routes one message to the file that handles its concern.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		changed := msg.Width != m.width || msg.Height != m.height
		m.width, m.height = msg.Width, msg.Height
		if changed {
			// Bubbletea sends the size it read at start from a goroutine
			// of its own, so a resize right after start can reach here
			// before that stale size does. Reading the size again after
			// every change makes the last one seen the terminal's.
			return m, tea.Batch(m.relayout(), tea.RequestWindowSize)
		}
		return m, m.relayout()
	case tea.KeyPressMsg:
		at, was := m.statusAt, placeOf(m)
		cmd := m.handleKey(msg)
		if !m.statusOK && m.statusAt.Equal(at) && placeOf(m) != was {
			// A complaint about where the operator was ("move to a line of
			// code…", "nothing to expire: …") is stale once the key moved
			// them elsewhere; a result keeps its statusTTL.
			m.status = ""
		}
		return m, cmd
	case tea.PasteMsg:
		return m, m.handlePaste(msg)
	case eventMsg:
		return m, m.handleEvent(msg)
	case behindMsg:
		m.setStatus("the console fell behind the engine's events; reread the task from the ledger", false)
		return m, tea.Batch(m.refresh(), m.fetchDetail())
	case engineStoppedMsg:
		if msg.err != nil {
			m.setStatus("stopping the engine: "+msg.err.Error(), false)
			return m, nil
		}
		return m, tea.Quit
	case panesMsg:
		// The newest screens are pulled at frame time; the message only
		// exists to make the program draw a frame, and to read a snapshot
		// that came with no event (a relayed session, a slot freed).
		if msg.snap {
			return m, m.refresh()
		}
		return m, nil
	case detailMsg:
		if !m.tabs.take(msg, m.selID) {
			return m, nil
		}
		m.refreshTabs()
		return m, nil
	case diffMsg:
		if m.dv.take(msg) {
			m.rebuildDiff()
		}
		return m, nil
	case replayMsg:
		if m.rp == nil {
			return m, nil // the replay was left before its answer came
		}
		return m, m.rp.update(msg)
	case doneMsg:
		return m, m.handleDone(msg)
	case inputDoneMsg:
		m.input.inflight = false
		if msg.err != nil {
			m.setStatus(msg.err.Error(), false)
		}
		return m, m.input.flush(m.eng)
	case resizeDoneMsg:
		if msg.err != nil {
			m.setStatus(msg.err.Error(), false)
		} else if msg.sized {
			m.panes.paneTook[msg.id] = msg
		}
		return m, nil
	case gTimeoutMsg:
		if !m.g.timedOut(msg) {
			return m, nil
		}
		return m, m.toggleGrid()
	case holdEndMsg:
		if !m.tasks.endHold(msg, m.now()) {
			return m, nil
		}
		// The selection stays on its task wherever that went.
		m.fixSelection()
		return m, m.relayout()
	case BannerMsg:
		before := len(m.renderBanner(m.width))
		m.banner = msg
		if len(m.renderBanner(m.width)) == before {
			return m, nil // same rows: nothing to resize
		}
		return m, m.relayout()
	case leaseTickMsg:
		m.leaseArmed = false
		m.setSnap(m.eng.Snapshot())
		m.fixSelection()
		if m.status != "" && m.pending == 0 && m.now().Sub(m.statusAt) > statusTTL {
			m.status = ""
		}
		return m, m.armLeaseTick()
	case spinTickMsg:
		m.spinArmed = false
		m.spin++
		return m, m.armSpin()
	}
	switch m.mode {
	case modeForm:
		return m, m.form.update(msg)
	case modeCorrect:
		var cmd tea.Cmd
		m.correct.in, cmd = m.correct.in.Update(msg)
		return m, cmd
	}
	return m, nil
}

// View renders one frame.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

// place is where the operator is: the mode, the view and the selection.
type place struct {
	mode       mode
	grid, zoom bool
	tab        tab
	sel        task.ID
}

func placeOf(m *Model) place {
	return place{m.mode, m.grid, m.zoom, m.tab, m.selID}
}

func (m *Model) setStatus(s string, ok bool) {
	m.status, m.statusOK, m.statusAt = s, ok, m.now()
}

// selected returns the selected task, if any.
func (m *Model) selected() (coord.TaskView, bool) {
	for _, tv := range m.snap.Tasks {
		if tv.Task.ID == m.selID {
			return tv, true
		}
	}
	return coord.TaskView{}, false
}

// liveCount counts tasks with a running session, for the quit question.
func liveCount(tasks []coord.TaskView) int {
	n := 0
	for _, tv := range tasks {
		if isLive(tv) {
			n++
		}
	}
	return n
}

func isLive(tv coord.TaskView) bool { return tv.SessionID != "" || tv.Task.State.Live() }
