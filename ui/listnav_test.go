package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// G and End select the last task, Home and g g the first; g alone, once
// its wait for a second g is over, still toggles the grid.
func TestHomeEndGGAndG(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	vis := b.m.tasks.visible()
	first, last := vis[0].Task.ID, vis[len(vis)-1].Task.ID
	b.press("G")
	require.Equal(t, last, b.m.selID)
	b.press("home")
	require.Equal(t, first, b.m.selID)
	b.press("end")
	require.Equal(t, last, b.m.selID)

	// g g, pressed faster than the wait: no command runs in between.
	_, _ = b.m.Update(keyMsg("g"))
	require.True(t, b.m.g.pending)
	b.send(keyMsg("g"))
	require.Equal(t, first, b.m.selID)
	require.False(t, b.m.grid, "g g is not the grid")
	// The first g's wait ending late changes nothing.
	b.send(gTimeoutMsg{seq: b.m.g.seq})
	require.False(t, b.m.grid)

	// g then another key: the grid, then that key.
	_, _ = b.m.Update(keyMsg("g"))
	b.send(keyMsg("j"))
	require.True(t, b.m.grid)

	// g alone: the grid toggles when the wait ends.
	b.press("g")
	require.False(t, b.m.grid)

	// The grid shows no tabs: a tab key leaves it for that tab, and the
	// Diff tab's enter browses a diff on the screen, not under the grid.
	b.press("g")
	require.True(t, b.m.grid)
	b.press("5")
	require.False(t, b.m.grid, "5 leaves the grid for the Diff tab")
	require.Equal(t, tabDiff, b.m.tab)
	require.NotContains(t, ansi.Strip(b.view()), "· GRID")
}

// / narrows the list as the operator types, enter keeps it, esc clears it;
// the selection stays on a listed task.
func TestSlashFiltersTheList(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	b.press("/").typeText("login")
	require.Equal(t, modeSearch, b.m.mode)
	require.Len(t, b.m.tasks.visible(), 1)
	tv, _ := b.m.selected()
	require.Contains(t, tv.Task.Title, "login")
	s := ansi.Strip(b.view())
	require.Contains(t, s, "TASKS 1/8 · filter all · /login")
	b.press("enter")
	require.Equal(t, modeNormal, b.m.mode)
	require.Len(t, b.m.tasks.visible(), 1, "enter keeps the filter")

	b.press("/").typeText("zzz").press("enter")
	require.Contains(t, ansi.Strip(b.view()), "no task matches /loginzzz · esc clears it")
	b.press("esc")
	require.Len(t, b.m.tasks.visible(), 8, "esc clears it")
	require.NotContains(t, ansi.Strip(b.view()), "/login")

	// By state and by flag too, in any case.
	b.press("/").typeText("STUCK")
	require.Len(t, b.m.tasks.visible(), 1)
	b.press("esc")
	require.Len(t, b.m.tasks.visible(), 8)
}

// A task added in the form is selected, even when the engine's snapshot
// lists it only after the add's answer, and even under a filter that would
// hide it.
func TestNewTaskIsSelected(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	newID := task.ID("01JQ8Z4NEWTASK0000000000NW")
	e.result = func(c coord.Command) (coord.Result, error) { return coord.Result{TaskID: newID}, nil }
	b := setupEngine(t, e).size(120, 40)
	b.press("f", "f", "f") // ended: a new task is not listed
	b.press("n").typeText("fix login").press("tab").typeText("it passes").press("tab").typeText("go test ./...").press("enter")
	require.Equal(t, filterAll, b.m.tasks.filter, "the list shows everything again")
	require.NotEqual(t, newID, b.m.selID, "not in the snapshot yet")

	e.mu.Lock()
	e.snap.Tasks = append(e.snap.Tasks, coord.TaskView{Task: task.Task{ID: newID, Title: "fix login", State: task.StateQueued, Phase: task.PhaseFrame, UpdatedAt: testNow}})
	e.mu.Unlock()
	b.send(eventMsg{ev: task.Event{Kind: task.EvTaskAdded, TaskID: newID, At: testNow}})
	require.Equal(t, newID, b.m.selID, "selected once listed")
	b.press("j")
	b.send(eventMsg{ev: task.Event{Kind: task.EvTaskLeased, TaskID: newID, At: testNow}})
	require.NotEqual(t, newID, b.m.selID, "only once: the operator moves on freely")
}

// Focus mode ends with the session it types into: when the session ends,
// or the task moves on to another session, keys stop going to the agent.
func TestFocusEndsWithItsSession(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	b := setupEngine(t, e).size(120, 40).selectState(task.StateRunning)
	id := b.m.selID
	b.press("enter")
	require.Equal(t, modeFocus, b.m.mode)

	// Another session of the same task (the next phase): focus ends.
	setSession(e, id, "01JQ8Z4SESSNEXT000000000")
	b.send(eventMsg{ev: task.Event{Kind: task.EvSessionLaunched, TaskID: id, At: testNow}})
	require.Equal(t, modeNormal, b.m.mode)
	require.Contains(t, ansi.Strip(b.view()), "the session you were typing into ended")

	b.press("enter")
	require.Equal(t, modeFocus, b.m.mode)
	setSession(e, id, "")
	b.send(eventMsg{ev: task.Event{Kind: task.EvSessionExited, TaskID: id, At: testNow}})
	require.Equal(t, modeNormal, b.m.mode)
	b.press("x")
	require.Empty(t, b.eng.typed(id), "no key reached an agent after its session ended")
}

func setSession(e *stubEngine, id task.ID, session string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.snap.Tasks {
		if e.snap.Tasks[i].Task.ID == id {
			e.snap.Tasks[i].SessionID = session
			if session == "" {
				e.snap.Tasks[i].Task.State = task.StateQueued
				e.snap.Tasks[i].Lease = nil
			}
		}
	}
}

// A grid cell's title carries what the grid is for: the stuck flag, the
// verdict, a lease in its last minute and the start of the task's title,
// at every size; a lease clock with minutes to go shows where there is room.
func TestGridTitlesCarryFlagLeaseVerdict(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		b := setup(t, everyState).size(sz[0], sz[1]).press("g")
		require.True(t, b.m.grid)
		title := ansi.Strip(strings.Split(b.view(), "\n")[1])
		require.Contains(t, title, "⚑ stuck 45s · ", "at %dx%d: %q", sz[0], sz[1], title)
		require.Contains(t, title, " fix the flaky", "the title's start at %dx%d", sz[0], sz[1])
		require.Contains(t, title, "✗ red", "at %dx%d", sz[0], sz[1])
		require.Contains(t, title, "lease 00:45", "the other cell's lease, in its last minute, at %dx%d", sz[0], sz[1])
		require.Contains(t, title, "migrate sessions", "the other cell's title at %dx%d", sz[0], sz[1])
		if sz[0] >= 200 {
			require.Contains(t, title, "lease 07:42", "at %dx%d", sz[0], sz[1])
		}
	}
}

// With long titles in an 80x24 grid, a cell's header keeps the start of
// the title, cut with an ellipsis, and drops the id, the lease clock and
// the phase first; the flag and the verdict stay whole.
func TestGridTitleKeepsTheTitlesStart(t *testing.T) {
	t.Parallel()
	long := func(e *stubEngine) {
		everyState(e)
		for i := range e.snap.Tasks {
			e.snap.Tasks[i].Task.Title = "refactor the payment reconciliation job " + e.snap.Tasks[i].Task.Title
		}
	}
	b := setup(t, long).size(80, 24).press("g")
	require.True(t, b.m.grid)
	header := ansi.Strip(strings.Split(b.view(), "\n")[1])
	cells := strings.Split(header, "│")
	require.Len(t, cells, 2, header)
	for _, c := range cells {
		require.Contains(t, c, " refactor the pa", "the title's start is kept: %q", header)
		require.Contains(t, c, "…", "the title is cut with an ellipsis: %q", header)
		require.NotContains(t, c, "implement", "the phase went before the title: %q", header)
	}
	require.Contains(t, cells[0], "lease 00:45", "a lease in its last minute stays: %q", header)
	require.Contains(t, cells[1], "⚑ stuck 45s · refactor the pa", header)
	require.Contains(t, cells[1], "✗ red", header)
	require.NotContains(t, cells[1], "07:42", "a lease with minutes to go gives way: %q", header)
	for _, tv := range b.eng.snap.Tasks {
		require.NotContains(t, header, tv.Task.ID.Short(), "the id gives way first: %q", header)
	}
}

// The approve message (where the work is, the merge command) is shown
// whole, wrapped, until esc or the next command.
func TestApproveMessageShownWhole(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	msg := "Approved. The work is on branch orchestra/x, 3 commits ahead of main; merge it with `orchestra-tui merge W6J2LC5E` (or `git merge orchestra/x`)."
	e.result = func(c coord.Command) (coord.Result, error) { return coord.Result{TaskID: c.TaskID, Message: msg}, nil }
	b := setupEngine(t, e).size(80, 24).selectState(task.StateAwaitingReview).press("a")
	flat := strings.Join(strings.Fields(ansi.Strip(b.view())), " ")
	require.Contains(t, flat, msg)
	requireFits(t, b.view(), 80, 24)
	b.press("esc")
	require.NotContains(t, ansi.Strip(b.view()), "orchestra-tui merge")
}

// The new-task form lists the harnesses found and warns about the choices
// that cannot do the work: blank or scripted (the demo agent), an unknown
// name, a program not installed.
func TestFormListsHarnessesAndWarnsOnScripted(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.m.opt.Harnesses = []HarnessInfo{{Name: "claude", Found: true}, {Name: "codex", Found: false}, {Name: "scripted", Found: true}, {Name: "shell", Found: true}}
	b.size(120, 40).press("n")
	flat := func() string { return strings.Join(strings.Fields(ansi.Strip(b.view())), " ") }
	require.Contains(t, flat(), "harnesses: claude · codex (not installed) · scripted · shell")
	require.Contains(t, flat(), "⚠ blank means scripted, the built-in demo agent")
	b.press("tab", "tab", "tab").typeText("scripted")
	require.Contains(t, flat(), "⚠ scripted is the built-in demo agent")
	for range "scripted" {
		b.press("backspace")
	}
	b.typeText("claude")
	require.NotContains(t, flat(), "⚠")
	for range "claude" {
		b.press("backspace")
	}
	b.typeText("codex")
	require.Contains(t, flat(), "⚠ codex's program is not installed here")
	b.typeText("2")
	require.Contains(t, flat(), "⚠ no harness named codex2")
	requireFits(t, b.view(), 120, 40)
	b.size(80, 24)
	requireFits(t, b.view(), 80, 24)
}

// Counts read as English: "1 task", "2 tasks".
func TestHeaderPlurals(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	e.snap.Tasks = []coord.TaskView{{Task: task.Task{ID: fixtureID(0), Title: "one", State: task.StateQueued}}}
	b := setupEngine(t, e).size(120, 40)
	require.Contains(t, ansi.Strip(b.view()), "· 1 task ·")
	require.NotContains(t, ansi.Strip(b.view()), "1 tasks")
	require.Contains(t, ansi.Strip(setup(t, everyState).size(120, 40).view()), "· 8 tasks ·")
}

// A status message from the engine that does not name its task gets the
// command and the task's id in front: "retry ID: queued again…".
func TestStatusNamesTheTask(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	e.result = func(c coord.Command) (coord.Result, error) {
		return coord.Result{TaskID: c.TaskID, Message: "queued again for phase implement with a fresh attempt budget"}, nil
	}
	b := setupEngine(t, e).size(120, 40).selectState(task.StateFailed)
	tv, _ := b.m.selected()
	b.press("R")
	require.Contains(t, ansi.Strip(b.view()), "retry "+tv.Task.ID.Short()+": queued again for phase implement")
}

// An empty / line shows its whole placeholder, not its first letter.
func TestSlashShowsItsPlaceholder(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(80, 24).press("/")
	require.Contains(t, ansi.Strip(b.view()), "/text in the id, title, state, phase or flag")
}
