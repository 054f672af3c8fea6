package ui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestFocusSendsCtrlCToTheAgentAndDoesNotQuit(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning)
	b.press("enter")
	require.Contains(t, ansi.Strip(b.view()), "FOCUS · ctrl+] to leave")
	b.press("ctrl+c", "ctrl+d", "esc", "ctrl+q")
	require.False(t, b.quit)
	require.Equal(t, modeFocus, b.m.mode)
	require.Equal(t, []byte{0x03, 0x04, 0x1b, 0x11}, b.eng.typed(b.m.selID))
}

func TestFocusTranslatesKeysAndPaste(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning).press("i")
	b.typeText("hi").press("enter", "backspace", "tab", "up", "left", "alt+x", "shift+tab")
	b.send(tea.PasteMsg{Content: "two\nlines"})
	want := "hi\r\x7f\t\x1b[A\x1b[D\x1bx\x1b[Z" + "\x1b[200~two\nlines\x1b[201~"
	require.Equal(t, want, string(b.eng.typed(b.m.selID)))
}

func TestLeaveFocusKeyLeaves(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning).press("enter")
	b.press("ctrl+]")
	require.Equal(t, modeNormal, b.m.mode)
	require.Empty(t, b.eng.typed(b.m.selID), "the leave key must not reach the agent")
	require.NotContains(t, ansi.Strip(b.view()), "FOCUS")
}

func TestCustomLeaveFocusKey(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	b.m.opt.LeaveFocusKey = "ctrl+g"
	b.size(120, 40).selectState(task.StateRunning).press("enter", "ctrl+]")
	require.Equal(t, modeFocus, b.m.mode)
	require.Equal(t, []byte{0x1d}, b.eng.typed(b.m.selID))
	b.press("ctrl+g")
	require.Equal(t, modeNormal, b.m.mode)
}

func TestCorrectionSendsCommandAndShowsResult(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	b.eng.result = func(c coord.Command) (coord.Result, error) {
		return coord.Result{Message: "delivered to session 01JQ8Z4SESSRUNNING000000", TaskID: c.TaskID, Delivered: true}, nil
	}
	b.size(120, 40).selectState(task.StateRunning)
	id := b.m.selID
	b.press("c").typeText("keep the public API unchanged").press("enter")
	cmds := b.eng.sentCommands()
	require.Len(t, cmds, 1)
	require.Equal(t, coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: "keep the public API unchanged", Author: "ana"}, cmds[0])
	require.Equal(t, modeNormal, b.m.mode)
	require.Contains(t, ansi.Strip(b.view()), "delivered to session 01JQ8Z4SESSRUNNING000000")
}

func TestEmptyCorrectionIsNotSent(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).press("c", "enter")
	require.Empty(t, b.eng.sentCommands())
	require.Equal(t, modeCorrect, b.m.mode)
	b.press("esc")
	require.Equal(t, modeNormal, b.m.mode)
}

func TestQuitWithLiveSessionsAsksFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).press("q")
	require.False(t, b.quit)
	require.Contains(t, ansi.Strip(b.view()), "2 sessions are running; quitting stops them and requeues their tasks")
	b.press("n")
	require.False(t, b.quit)
	b.press("q", "y")
	require.True(t, b.quit)
}

func TestQuitWithNothingRunningQuitsAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).size(80, 24).press("q")
	require.True(t, b.quit)
}

func TestActionKeysSendCommands(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning)
	id := b.m.selID
	b.press("r", "e", "x")
	require.Equal(t, modeConfirm, b.m.mode, "expire asks first")
	require.Contains(t, ansi.Strip(b.view()), "Expire the lease of "+id.Short())
	b.press("y", "p")
	require.Equal(t, modeConfirm, b.m.mode, "parking a live task asks first")
	b.press("y", "a", "D")
	require.Equal(t, modeConfirm, b.m.mode, "cancel asks first")
	b.press("y")
	var got []coord.Command
	for _, c := range b.eng.sentCommands() {
		got = append(got, coord.Command{Kind: c.Kind, TaskID: c.TaskID, Duration: c.Duration})
	}
	require.Equal(t, []coord.Command{
		{Kind: coord.CmdResubmit, TaskID: id},
		{Kind: coord.CmdExtend, TaskID: id, Duration: 10 * time.Minute},
		{Kind: coord.CmdExpire, TaskID: id},
		{Kind: coord.CmdPark, TaskID: id},
		{Kind: coord.CmdApprove, TaskID: id},
		{Kind: coord.CmdCancel, TaskID: id},
	}, got)

	b.selectState(task.StateParked).press("p")
	cmds := b.eng.sentCommands()
	require.Equal(t, coord.CmdUnpark, cmds[len(cmds)-1].Kind)
}

// Every key that stops a session asks first, and n leaves it running.
func TestDestructiveKeysAskFirst(t *testing.T) {
	t.Parallel()
	for k, declined := range map[string]string{"x": "not expired: ", "p": "not parked: ", "D": "not cancelled: "} {
		b := setup(t, everyState).size(80, 24).selectState(task.StateRunning)
		b.press(k)
		require.Equal(t, modeConfirm, b.m.mode, "%s asks first", k)
		require.Contains(t, ansi.Strip(b.view()), "y/n", "%s asks on screen", k)
		b.press("j")
		require.Equal(t, modeConfirm, b.m.mode, "a stray key leaves %s's question open", k)
		require.Contains(t, ansi.Strip(b.view()), "j does not answer", "a stray key says so")
		b.press("n")
		require.Empty(t, b.eng.sentCommands(), "n to %s sends nothing", k)
		tv, _ := b.m.selected()
		require.Contains(t, ansi.Strip(b.view()), declined+tv.Task.ID.Short(), "n says what was left undone, and on which task")
	}
	// D on a merged task says there is nothing to cancel, and asks nothing.
	b0 := setup(t, everyState).size(120, 40).selectState(task.StateCompleted).press("D")
	require.Equal(t, modeNormal, b0.m.mode)
	require.Contains(t, ansi.Strip(b0.view()), "nothing to cancel: ")
	// On a task with no session, x says there is nothing to expire.
	b := setup(t, everyState).size(120, 40).selectState(task.StateCompleted).press("x")
	require.Equal(t, modeNormal, b.m.mode)
	require.Empty(t, b.eng.sentCommands())
	require.Contains(t, ansi.Strip(b.view()), "nothing to expire")
}

// A complaint about where the operator was goes when a key takes them
// elsewhere (another task, tab or mode); it does not linger for its 8 s
// over a screen it no longer speaks of.
func TestAComplaintGoesWithTheOperatorsMove(t *testing.T) {
	t.Parallel()
	for _, move := range []string{"j", "2", "?"} {
		b := setup(t, everyState).size(120, 40).selectState(task.StateCompleted).press("x")
		require.Contains(t, ansi.Strip(b.view()), "nothing to expire", "before %q", move)
		b.press(move)
		require.NotContains(t, ansi.Strip(b.view()), "nothing to expire", "after %q", move)
	}
	// A key that moves nothing leaves it be.
	b := setup(t, everyState).size(120, 40).selectState(task.StateCompleted).press("x")
	b.press("x")
	require.Contains(t, ansi.Strip(b.view()), "nothing to expire")
}

func TestDoErrorShowsInStatusBar(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	b.eng.result = func(coord.Command) (coord.Result, error) {
		return coord.Result{}, &task.Refusal{Reason: task.ReasonIllegalTransition, Detail: "approve needs awaiting-review"}
	}
	b.size(120, 40).press("a")
	require.Contains(t, ansi.Strip(b.view()), "approve K7QF2M1A failed: The task cannot make that move")
}

// A refusal that names the task and the move already is said once, so
// its reason fits an 80-column status line; an extend says its time as
// typed.
func TestDoRefusalNamingTheTaskIsSaidOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	b.eng.result = func(c coord.Command) (coord.Result, error) {
		return coord.Result{}, fmt.Errorf("cannot %s task %s: it is completed, not awaiting review", c.Kind, c.TaskID.Short())
	}
	b.size(80, 24).selectState(task.StateCompleted)
	tv, _ := b.m.selected()
	id := tv.Task.ID.Short()
	b.press("a")
	out := ansi.Strip(b.view())
	require.Contains(t, out, "cannot approve task "+id+": it is completed, not awaiting review", out)
	require.NotContains(t, out, "approve "+id+" failed", out)
	require.Equal(t, "extend K7QF2M1A by 10m", describe(coord.Command{Kind: coord.CmdExtend, TaskID: fixtureID(0), Duration: 10 * time.Minute}))
	require.Equal(t, "1h30m", shortDuration(90*time.Minute))
	require.Equal(t, "2h", shortDuration(2*time.Hour))
}

func TestNewTaskFormAdds(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).size(120, 40).press("n")
	b.typeText("fix login").press("tab").typeText("the login test passes").press("tab").typeText("go test ./...").press("enter")
	cmds := b.eng.sentCommands()
	require.Len(t, cmds, 1)
	require.Equal(t, coord.CmdAdd, cmds[0].Kind)
	require.Equal(t, task.Task{Title: "fix login", Goal: "the login test passes", Verify: "go test ./...", Pipeline: task.DefaultPipeline()}, *cmds[0].Task)
}

func TestNewTaskFormRefusesMissingVerify(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).size(120, 40).press("n")
	b.typeText("fix login").press("tab").typeText("goal").press("enter")
	require.Empty(t, b.eng.sentCommands())
	require.Contains(t, ansi.Strip(b.view()), "no verify command")
}

func TestFilterCyclesAndKeepsSelectionVisible(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	b.press("f")
	require.Equal(t, filterLive, b.m.tasks.filter)
	tv, ok := b.m.selected()
	require.True(t, ok)
	require.True(t, tv.Task.State.Live())
	b.press("f")
	require.Equal(t, filterAttention, b.m.tasks.filter)
	for _, tv := range b.m.tasks.visible() {
		require.True(t, needsHuman(tv), "%s is listed as needing attention", tv.Task.State)
	}
	require.Len(t, b.m.tasks.visible(), 4, "awaiting review, failed, stuck and unplaceable")
	b.press("f")
	require.Equal(t, filterEnded, b.m.tasks.filter)
	tv, _ = b.m.selected()
	require.True(t, tv.Task.State.Terminal())
	require.Len(t, b.m.tasks.visible(), 3)
	b.press("f")
	require.Equal(t, filterAll, b.m.tasks.filter)
}

// The list puts what needs a human first, then what runs, then the rest
// with the most recent activity first.
func TestListOrderNeedsHumanThenLiveThenRecent(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	var got []task.State
	for _, tv := range b.m.tasks.visible() {
		got = append(got, tv.Task.State)
	}
	require.Equal(t, []task.State{
		// needs a human, most recent first: unplaceable (queued), stuck
		// (running), awaiting review, failed
		task.StateQueued, task.StateRunning, task.StateAwaitingReview, task.StateFailed,
		// live, in creation order
		task.StateLeased,
		// the rest, most recent first
		task.StateParked, task.StateCompleted, task.StateCancelled,
	}, got)
}

func TestLivePaneIsResizedToItsDrawnSize(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning)
	l := b.m.layout()
	require.Equal(t, [2]int{l.rightW, l.contentH}, b.eng.resizes[b.m.selID])
	b.size(200, 50)
	l = b.m.layout()
	require.Equal(t, [2]int{l.rightW, l.contentH}, b.eng.resizes[b.m.selID])
}

func TestScrollModeShowsScrollback(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning)
	v := b.eng.panes[b.m.selID]
	for i := range 60 {
		v.write("history line " + string(rune('A'+i%26)) + "\r\n")
	}
	b.press("s", "pgup", "pgup")
	require.Equal(t, modeScroll, b.m.mode)
	require.Contains(t, ansi.Strip(b.view()), "Claude Code", "the first screen line scrolled off and is back in history")
	b.press("esc")
	require.Equal(t, modeNormal, b.m.mode)
}

func TestLeaseTimersTick(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	now := testNow
	b.m.now = func() time.Time { return now }
	b.size(120, 40).selectState(task.StateRunning)
	require.Contains(t, ansi.Strip(b.view()), "lease 07:42 left")
	now = now.Add(2 * time.Second)
	b.send(leaseTickMsg{})
	require.Contains(t, ansi.Strip(b.view()), "lease 07:40 left")
	require.Contains(t, ansi.Strip(b.view()), "progress 47s ago")
}

func TestPaneIsRenderedOnlyWhenItChangesAndIsShown(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning)
	v := b.eng.panes[b.m.selID]
	_ = b.view()
	base := v.renders.Load()
	_ = b.view()
	b.send(panesMsg{ids: []task.ID{b.m.selID}})
	require.Equal(t, base, v.renders.Load(), "an unchanged screen is drawn from the cache")
	v.write("more output")
	_ = b.view()
	require.Equal(t, base+1, v.renders.Load())
	b.press("2")
	v.write("even more")
	_ = b.view()
	require.Equal(t, base+1, v.renders.Load(), "a hidden pane is not rendered")
}

func TestNewSessionNeverShowsThePreviousSessionsScreen(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateRunning)
	id := b.m.selID
	old := b.eng.panes[id]
	require.Contains(t, ansi.Strip(b.view()), "Reading auth/login_test.go")
	// The next phase's session counts its screen versions from zero; at
	// some frame its count equals the one the old screen was cached at.
	next := newStubView(120, 40, "review: reading the diff")
	for next.Version() < old.Version() {
		next.write("")
	}
	require.Equal(t, old.Version(), next.Version())
	b.eng.mu.Lock()
	b.eng.panes[id] = next
	for i, tv := range b.eng.snap.Tasks {
		if tv.Task.ID == id {
			b.eng.snap.Tasks[i].Task.Phase = task.PhaseReview
			b.eng.snap.Tasks[i].SessionID = "01JQ8Z4SESSREVIEW0000000"
		}
	}
	b.eng.mu.Unlock()
	b.send(panesMsg{ids: []task.ID{id}})
	out := ansi.Strip(b.view())
	require.Contains(t, out, "review: reading the diff")
	require.NotContains(t, out, "Reading auth/login_test.go")
}

// One live session is "it" and "its task" in the quit question.
func TestQuitWithOneLiveSessionSaysIt(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	e.snap.Tasks = []coord.TaskView{{Task: task.Task{ID: fixtureID(0), Title: "one", State: task.StateRunning}, SessionID: "01JQ8Z4SESSRUNNING000000"}}
	b := setupEngine(t, e).size(160, 40).press("q")
	require.False(t, b.quit)
	require.Contains(t, ansi.Strip(b.view()), "1 session is running; quitting stops it and requeues its task (its work in the worktree is kept)")
}

// A snapshot of the same generation only ages the lease clocks: the listed
// views of leased tasks take the new clocks, and the order is not
// recomputed; a new generation is ordered again.
func TestSameGenerationKeepsTheOrderAndTakesTheClocks(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	s := b.eng.Snapshot()
	s.Gen = 7
	b.m.setSnap(s)
	before := append([]coord.TaskView(nil), b.m.tasks.visible()...)

	again := b.eng.Snapshot()
	again.Gen = 7
	leased := -1
	for i := range again.Tasks {
		if l := again.Tasks[i].Lease; l != nil {
			c := *l
			c.Remaining -= time.Second
			again.Tasks[i].Lease = &c
			leased = i
		}
	}
	require.GreaterOrEqual(t, leased, 0, "the fixture has a leased task")
	// A task that became the most recent would move up if a snapshot of
	// the same generation were sorted at all (the coordinator never sends
	// one like it: a change is a new generation).
	last := before[len(before)-1].Task.ID
	for i := range again.Tasks {
		if again.Tasks[i].Task.ID == last {
			again.Tasks[i].Task.UpdatedAt = again.Tasks[i].Task.UpdatedAt.Add(240 * time.Hour)
		}
	}
	b.m.setSnap(again)
	after := b.m.tasks.visible()
	require.Len(t, after, len(before))
	for i := range before {
		require.Equal(t, before[i].Task.ID, after[i].Task.ID, "the order stands")
		if before[i].Lease != nil {
			require.Equal(t, before[i].Lease.Remaining-time.Second, after[i].Lease.Remaining, "the clock moved")
		}
	}

	again.Gen = 8
	b.m.setSnap(again)
	require.NotEqual(t, last, b.m.tasks.visible()[len(before)-1].Task.ID, "a new generation is ordered again")
}
