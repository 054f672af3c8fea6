// Package ui is the operator console: one root bubbletea model that reads
// engine snapshots, pulls session screens at frame time and turns every key
// that changes something into a coord.Command. It never edits task state.
//
// Components are plain structs and functions that render into exactly the
// width and height they are given; the root's Update is split by concern:
// keys.go (what a key does in each mode), commands.go (engine calls as
// tea.Cmds and their results), layout.go (sizes), and one file per pane.
package ui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
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

	snap coord.Snapshot
	list []coord.TaskView // the tasks listed: filtered, searched, in order
	// listGen is the snapshot generation list was ordered from (0: none).
	listGen uint64
	filter  filter
	search  listSearch
	// searchIn is the / line; pendingG says a g waits for a second g
	// (gSeq tells its timeout apart from an older one's).
	searchIn textinput.Model
	pendingG bool
	// wantSel is a task the operator just made, selected as soon as the
	// snapshot lists it; focusSession is the session focus mode types into.
	wantSel      task.ID
	focusSession string
	gSeq         int
	selID        task.ID
	tab          tab
	grid         bool
	mode         mode
	zoom         bool // in focus mode: the pane has the whole terminal but the status line

	detail      coord.Detail
	detailID    task.ID // which task detail belongs to; empty when none
	detailErr   error
	ledgers     map[task.ID]*ledger // followed details, by task (detail.go)
	ledgerClock uint64
	brief       viewport.Model
	verdicts    viewport.Model
	events      viewport.Model

	scrollOff int // lines above the bottom in scroll mode

	dv diffView // the Diff tab (diff.go)
	rp *replay  // the replay in modeReplay (replay.go), nil otherwise

	form    newTaskForm
	correct textinput.Model
	confirm confirmation

	banner   BannerMsg // set from outside (the demo); see BannerMsg
	note     BannerMsg // the console's own note: the approve message
	status   string
	statusOK bool
	statusAt time.Time
	pending  int // commands in flight
	spin     int

	input     inputQueue
	paneSizes map[task.ID]paneSize // last size asked of the engine per pane
	// paneTook is the engine's answer to the last size asked per pane,
	// from an engine that sizes panes per console (coord.PaneSizer): a
	// pane whose pty has another size was sized by another console.
	paneTook   map[task.ID]resizeDoneMsg
	resizer    *resizer
	paneCache  map[task.ID]paneCacheEntry
	leaseArmed bool
	spinArmed  bool
	// holdUntil is when the list may re-sort again after the operator's
	// last move through it (listhold.go).
	holdUntil time.Time

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
		eng:       e,
		opt:       o,
		now:       now,
		opened:    now(),
		st:        newStyles(),
		paneSizes: map[task.ID]paneSize{},
		paneTook:  map[task.ID]resizeDoneMsg{},
		ledgers:   map[task.ID]*ledger{},
		resizer:   newResizer(),
		paneCache: map[task.ID]paneCacheEntry{},
		tick:      tea.Tick,
		brief:     viewport.New(),
		verdicts:  viewport.New(),
		events:    viewport.New(),
	}
	for _, vp := range []*viewport.Model{&m.brief, &m.verdicts, &m.events} {
		vp.SoftWrap = true
	}
	m.keys = newKeyMap(o.LeaveFocusKey)
	if o.Detach {
		m.keys.quit.SetHelp("q", "detach: the agents keep running")
	}
	m.form = newTaskFormModel()
	m.searchIn = newSearchInput()
	m.correct = newInput("correction: ", "what the agent should do differently")
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
		return m, m.handleKey(msg)
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
		// exists to make the program draw a frame.
		return m, nil
	case detailMsg:
		return m, m.handleDetail(msg)
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
		return m, m.handleInputDone(msg)
	case resizeDoneMsg:
		if msg.err != nil {
			m.setStatus(msg.err.Error(), false)
		} else if msg.sized {
			m.paneTook[msg.id] = msg
		}
		return m, nil
	case gTimeoutMsg:
		return m, m.handleGTimeout(msg)
	case holdEndMsg:
		return m, m.endHold(msg)
	case BannerMsg:
		before := len(m.renderBanner(m.width))
		m.banner = msg
		if len(m.renderBanner(m.width)) == before {
			return m, nil // same rows: nothing to resize
		}
		return m, m.relayout()
	case leaseTickMsg:
		return m, m.handleLeaseTick()
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
		m.correct, cmd = m.correct.Update(msg)
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
func (m *Model) liveCount() int {
	n := 0
	for _, tv := range m.snap.Tasks {
		if isLive(tv) {
			n++
		}
	}
	return n
}

func isLive(tv coord.TaskView) bool { return tv.SessionID != "" || tv.Task.State.Live() }
