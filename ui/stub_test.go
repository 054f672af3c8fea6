package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// stubEngine is an in-memory coord.Engine that records what the console
// asks of it.
type stubEngine struct {
	mu       sync.Mutex
	snap     coord.Snapshot
	panes    map[task.ID]*stubView
	details  map[task.ID]coord.Detail
	commands []coord.Command
	inputs   map[task.ID][]byte
	resizes  map[task.ID][2]int
	notices  chan coord.Notice
	// unsubOnce guards unsubbed across subscriptions.
	unsubOnce sync.Once
	unsubbed  chan struct{}
	result    func(coord.Command) (coord.Result, error)
	onInput   func(id task.ID, b []byte) // called after recording typed bytes
	// diffs are the tasks' diffs by scope (diff_test.go).
	diffs map[task.ID]map[diff.Scope]diff.Result
	// recordings are the tasks' recordings by session, "" for the last
	// (replay_test.go).
	recordings map[task.ID]map[string]coord.Recording
}

func newStubEngine(at time.Time) *stubEngine {
	return &stubEngine{
		snap:     coord.Snapshot{At: at},
		panes:    map[task.ID]*stubView{},
		details:  map[task.ID]coord.Detail{},
		inputs:   map[task.ID][]byte{},
		resizes:  map[task.ID][2]int{},
		notices:  make(chan coord.Notice, 64),
		unsubbed: make(chan struct{}),
	}
}

func (e *stubEngine) Snapshot() coord.Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.snap
	s.Tasks = append([]coord.TaskView(nil), e.snap.Tasks...)
	return s
}

// Subscribe hands out the one notice channel; ending any subscription
// marks unsubbed (once: a renewed subscription ends the first).
func (e *stubEngine) Subscribe() (<-chan coord.Notice, func()) {
	return e.notices, func() { e.unsubOnce.Do(func() { close(e.unsubbed) }) }
}

func (e *stubEngine) Pane(id task.ID) (session.View, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.panes[id]
	if !ok {
		return nil, false
	}
	return v, true
}

func (e *stubEngine) Detail(_ context.Context, id task.ID, _ coord.DetailQuery) (coord.Detail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.details[id]
	if !ok {
		return coord.Detail{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return d, nil
}

func (e *stubEngine) Do(_ context.Context, c coord.Command) (coord.Result, error) {
	e.mu.Lock()
	e.commands = append(e.commands, c)
	result := e.result
	e.mu.Unlock()
	if result != nil {
		return result(c)
	}
	return coord.Result{Message: string(c.Kind) + " " + c.TaskID.Short() + ": done", TaskID: c.TaskID}, nil
}

// Recording serves the recording the test stored (coord.Recorder).
func (e *stubEngine) Recording(_ context.Context, id task.ID, sessionID string) (coord.Recording, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.recordings[id][sessionID]
	if !ok {
		return coord.Recording{}, fmt.Errorf("task %s has no recorded session %q", id.Short(), sessionID)
	}
	return rec, nil
}

func (e *stubEngine) Input(id task.ID, b []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inputs[id] = append(e.inputs[id], b...)
	if e.onInput != nil {
		e.onInput(id, b)
	}
	return nil
}

func (e *stubEngine) ResizePane(id task.ID, cols, rows int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.resizes[id] = [2]int{cols, rows}
	if v, ok := e.panes[id]; ok {
		v.resize(cols, rows)
	}
	return nil
}

func (e *stubEngine) sentCommands() []coord.Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]coord.Command(nil), e.commands...)
}

func (e *stubEngine) typed(id task.ID) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]byte(nil), e.inputs[id]...)
}

// stubView is a session.View over a real x/vt emulator, so panes in tests
// carry the same ANSI a live session would.
type stubView struct {
	mu      sync.Mutex
	emu     *vt.SafeEmulator
	version uint64
	renders atomic.Int64 // how often the console asked for the screen
}

func newStubView(cols, rows int, content string) *stubView {
	v := &stubView{emu: vt.NewSafeEmulator(cols, rows)}
	v.write(content)
	return v
}

func (v *stubView) write(s string) {
	_, _ = v.emu.Write([]byte(s))
	v.mu.Lock()
	v.version++
	v.mu.Unlock()
}

func (v *stubView) resize(cols, rows int) {
	v.emu.Resize(cols, rows)
	v.mu.Lock()
	v.version++
	v.mu.Unlock()
}

func (v *stubView) Size() (int, int) { return v.emu.Width(), v.emu.Height() }
func (v *stubView) Render() string {
	v.renders.Add(1)
	return v.emu.Render()
}
func (v *stubView) Text() string  { return ansi.Strip(v.emu.Render()) }
func (v *stubView) Title() string { return "" }
func (v *stubView) Cursor() (int, int, bool) {
	p := v.emu.CursorPosition()
	return p.X, p.Y, !v.emu.CursorHidden()
}

func (v *stubView) Scrollback(n int) []string {
	sb := v.emu.Scrollback()
	if sb == nil {
		return nil
	}
	lines := sb.Lines()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Render()
	}
	return out
}

func (v *stubView) Version() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.version
}

// bundle is a console over a stub engine, driven synchronously.
type bundle struct {
	t    testing.TB
	eng  *stubEngine
	m    *Model
	quit bool
	raw  []string // what the console wrote to the terminal beside its frames
}

// testNow is the fixed clock every test renders at.
var testNow = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

func setup(t testing.TB, fill func(e *stubEngine)) *bundle {
	e := newStubEngine(testNow)
	if fill != nil {
		fill(e)
	}
	return setupEngine(t, e)
}

// setupEngine builds a console over an engine the caller filled.
func setupEngine(t testing.TB, e *stubEngine) *bundle {
	m := New(e, Options{NoAnim: true, Now: func() time.Time { return testNow }, RepoName: "acme/api", Author: "ana"})
	// Timers would make the synchronous driver wait on the real clock. The
	// wait for a second g ends at once: press("g") toggles the grid (tests
	// of g g press both keys without running commands in between).
	m.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		if d == gWait {
			return func() tea.Msg { return fn(testNow) }
		}
		return nil
	}
	b := &bundle{t: t, eng: e, m: m}
	b.run(m.Init())
	return b
}

// send feeds a message to Update and runs whatever commands follow.
func (b *bundle) send(msg tea.Msg) {
	_, cmd := b.m.Update(msg)
	b.run(cmd)
}

// run executes a command and its consequences synchronously, as the
// program would, minus concurrency.
func (b *bundle) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			b.run(c)
		}
	case tea.QuitMsg:
		b.quit = true
	case tea.RawMsg:
		b.raw = append(b.raw, fmt.Sprint(msg.Msg))
	default:
		b.send(msg)
	}
}

func (b *bundle) size(w, h int) *bundle {
	b.send(tea.WindowSizeMsg{Width: w, Height: h})
	return b
}

func (b *bundle) press(keys ...string) *bundle {
	for _, k := range keys {
		b.send(keyMsg(k))
	}
	return b
}

func (b *bundle) typeText(s string) *bundle {
	for _, r := range s {
		b.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return b
}

func (b *bundle) view() string { return b.m.View().Content }

// keyMsg builds the key press bubbletea would deliver for a key name such
// as "a", "enter", "ctrl+c" or "ctrl+]".
func keyMsg(s string) tea.KeyPressMsg {
	named := map[string]rune{
		"enter": tea.KeyEnter, "tab": tea.KeyTab, "esc": tea.KeyEscape, "backspace": tea.KeyBackspace,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd, "space": tea.KeySpace,
	}
	var mod tea.KeyMod
	for {
		switch {
		case strings.HasPrefix(s, "ctrl+") && len(s) > 5:
			mod |= tea.ModCtrl
			s = s[5:]
			continue
		case strings.HasPrefix(s, "alt+") && len(s) > 4:
			mod |= tea.ModAlt
			s = s[4:]
			continue
		case strings.HasPrefix(s, "shift+") && len(s) > 6:
			mod |= tea.ModShift
			s = s[6:]
			continue
		}
		break
	}
	if r, ok := named[s]; ok {
		return tea.KeyPressMsg{Code: r, Mod: mod}
	}
	r := []rune(s)[0]
	if mod == 0 {
		return tea.KeyPressMsg{Code: r, Text: s}
	}
	return tea.KeyPressMsg{Code: r, Mod: mod}
}

func TestKeyMsgMatchesBubbletea(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"a", "D", "?", "enter", "ctrl+c", "ctrl+]", "shift+tab", "pgdown", "alt+x"} {
		require.Equal(t, k, keyMsg(k).String())
	}
}

// Fixtures: tasks in every state, with leases, verdicts, flags and detail.

var shortIDs = []string{"K7QF2M1A", "R2D9XW4B", "H8P3NV6C", "T4M1QZ8D", "W6J2LC5E", "B9X7GK3F", "N3V8RT2G", "Z5C4HY7H"}

func fixtureID(i int) task.ID {
	return task.ID("01JQ8Z3N5V0000000" + fmt.Sprintf("%d", i%10) + shortIDs[i%len(shortIDs)])
}

var titles = map[task.State]string{
	task.StateQueued:         "add rate limiting to the public API",
	task.StateLeased:         "migrate sessions table to ULIDs",
	task.StateRunning:        "fix the flaky login test",
	task.StateParked:         "upgrade the ORM to v3",
	task.StateAwaitingReview: "document the billing webhooks",
	task.StateCompleted:      "remove the legacy /v0 routes",
	task.StateFailed:         "port the CLI to cobra",
	task.StateCancelled:      "experiment: switch to gRPC",
}

// fixtureStates are the states everyState shows, one task each: the
// lifecycle's own; the merge queue's have their fixture in
// mergequeue_test.go.
var fixtureStates = []task.State{task.StateQueued, task.StateLeased, task.StateRunning, task.StateParked,
	task.StateAwaitingReview, task.StateCompleted, task.StateFailed, task.StateCancelled}

// everyState fills the engine with one task per state; the running one has
// a live coloured pane and a full detail.
func everyState(e *stubEngine) {
	now := e.snap.At
	for i, s := range fixtureStates {
		t := task.Task{
			ID: fixtureID(i), Title: titles[s], Goal: "goal", Verify: "go test ./...",
			Pipeline: task.DefaultPipeline(), State: s, Phase: task.PhaseImplement, Attempt: 1,
			CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Duration(i+1) * time.Minute),
		}
		tv := coord.TaskView{Task: t}
		switch s {
		case task.StateQueued:
			tv.Task.Phase, tv.Task.Attempt = task.PhaseFrame, 0
			tv.Flag = "unplaceable: no slot offers gpu"
		case task.StateLeased:
			tv.SessionID = "01JQ8Z4SESSLEASED0000000"
			tv.Lease = &coord.LeaseView{Token: 3, Holder: "console-1", Deadline: now.Add(45 * time.Second), Remaining: 45 * time.Second, WindowOpensIn: 0, SinceProgress: 4 * time.Second, MaxRenewals: 6}
			e.panes[t.ID] = newStubView(80, 24, "\x1b[1mclaude\x1b[0m starting…\r\n")
		case task.StateRunning:
			tv.Task.Attempt = 2
			tv.SessionID = "01JQ8Z4SESSRUNNING000000"
			tv.Flag = "stuck 45s"
			tv.Stuck = true
			tv.Lease = &coord.LeaseView{Token: 7, Holder: "console-1", Deadline: now.Add(7*time.Minute + 42*time.Second), Remaining: 7*time.Minute + 42*time.Second,
				WindowOpensIn: 2*time.Minute + 12*time.Second, SinceProgress: 45 * time.Second, Renewals: 2, MaxRenewals: 6,
				LastDecision: "renewed", LastReason: "", LastReasonText: "the pane made progress"}
			tv.Verdict = &verify.Verdict{Status: verify.StatusIncomplete, Command: "go test ./...", ExitCode: 1, Passed: 41, Failed: 2, Counted: true, Duration: 4200 * time.Millisecond, At: now.Add(-3 * time.Minute)}
			e.panes[t.ID] = newStubView(120, 40, agentScreen)
			e.details[t.ID] = runningDetail(t, now)
		case task.StateParked:
			tv.Task.Reason = "parked by ana: waiting on the vendor"
		case task.StateAwaitingReview:
			tv.Task.Phase = task.PhaseReview
			tv.Verdict = &verify.Verdict{Status: verify.StatusOK, Command: "go test ./...", Passed: 120, Counted: true, Duration: 9 * time.Second}
		case task.StateCompleted:
			tv.Task.Phase = task.PhaseReview
			tv.Verdict = &verify.Verdict{Status: verify.StatusOK, Command: "go test ./...", Passed: 88, Counted: true}
		case task.StateFailed:
			tv.Task.Reason = "attempts exhausted"
			tv.Verdict = &verify.Verdict{Status: verify.StatusError, Command: "go test ./...", ExitCode: 2, Detail: "timed out after 10m"}
		case task.StateCancelled:
			tv.Task.Reason = "cancelled by ana"
		}
		e.snap.Tasks = append(e.snap.Tasks, tv)
		if _, ok := e.details[t.ID]; !ok {
			e.details[t.ID] = coord.Detail{Task: tv.Task, Events: []task.Event{{Kind: task.EvTaskAdded, TaskID: t.ID, Text: "added by ana", At: now.Add(-time.Hour)}}}
		}
	}
}

// agentScreen is what a coding agent's terminal looks like mid-task, with
// 16-colour, 256-colour and truecolour text.
const agentScreen = "\x1b[1;38;5;208m✻ Claude Code\x1b[0m \x1b[2mv2.1 · implement · attempt 2\x1b[0m\r\n" +
	"\r\n" +
	"\x1b[36m●\x1b[0m Reading \x1b[1mauth/login_test.go\x1b[0m\r\n" +
	"\x1b[36m●\x1b[0m The test races on the session cookie; adding a \x1b[33msync.WaitGroup\x1b[0m\r\n" +
	"\x1b[32m+\x1b[0m \x1b[32m\twg.Wait()\x1b[0m\r\n" +
	"\x1b[31m-\x1b[0m \x1b[31m\ttime.Sleep(100 * time.Millisecond)\x1b[0m\r\n" +
	"\x1b[38;2;120;200;255m$ go test ./auth/...\x1b[0m\r\n" +
	"\x1b[42;30m PASS \x1b[0m auth  0.412s\r\n" +
	"\r\n" +
	"\x1b[7m > \x1b[0m waiting for input"

func runningDetail(t task.Task, now time.Time) coord.Detail {
	at := func(m int) time.Time { return now.Add(time.Duration(-m) * time.Minute) }
	return coord.Detail{
		Task: t,
		Brief: "## Goal\nFix the flaky login test.\n\n## Acceptance\n- go test ./auth/... passes 50 times in a row\n\n" +
			"## Current human decisions\n- Do not touch the session store; fix the test only. (ana, 09:12)\n\n" +
			"## Current phase implement\nWrite the fix. When done write .orchestra/done.\n\n" +
			"## Repository rules\nNo new dependencies.\n\n## Verified git state\nbranch orchestra/" + t.ID.Short() + " at 3f2a91c, 2 files changed\n\n" +
			"## Accepted research\nThe race is between the cookie jar and the handler.\n\n## Accepted plan\n1. add a WaitGroup\n2. remove the sleep\n\n" +
			"## Continuity from the previous session\nThe first attempt stalled on a prompt.\n\n### Dead ends already tried\n- raising the sleep to 500ms\n",
		Events: []task.Event{
			{Kind: task.EvTaskAdded, Text: "added by ana", At: at(60)},
			{Kind: task.EvTaskLeased, Text: "leased to console-1 (token 6)", At: at(30)},
			{Kind: task.EvSessionLaunched, Text: "claude launched for implement, attempt 1", At: at(30)},
			{Kind: task.EvRefusal, Reason: task.ReasonLaunchNotConfirmed, Text: "no ready marker within 30s", At: at(29)},
			{Kind: task.EvTaskRequeued, Reason: task.ReasonLaunchNotConfirmed, Text: "requeued", At: at(29)},
			{Kind: task.EvDecisionRecorded, Text: "ana: Do not touch the session store; fix the test only.", At: at(14)},
			{Kind: task.EvSessionConfirmed, Text: "claude ready, brief delivered", At: at(12)},
			{Kind: task.EvVerifyFinished, Text: "✗ incomplete · tests failing · 41 passed, 2 failed", At: at(3)},
			{Kind: task.EvLeaseRenewed, Text: "renewed: the pane made progress (2/6)", At: at(1)},
		},
		Verdicts: []store.VerdictRecord{
			{TaskID: t.ID, Phase: task.PhasePlan, Verdict: verify.Verdict{Status: verify.StatusError, Command: "go test ./...", ExitCode: 2, Detail: "build failed", At: at(20)}},
			{TaskID: t.ID, Phase: task.PhaseImplement, Verdict: verify.Verdict{Status: verify.StatusIncomplete, Command: "go test ./...", ExitCode: 1, Passed: 41, Failed: 2, Counted: true, Duration: 4200 * time.Millisecond,
				Tail: "--- FAIL: TestLogin (0.02s)\n    login_test.go:42: cookie not set\nFAIL\nFAIL\tacme/auth\t0.412s", At: at(3)}},
		},
	}
}

// selectState moves the selection to the task in state s.
func (b *bundle) selectState(s task.State) *bundle {
	for range task.States {
		tv, _ := b.m.selected()
		if tv.Task.State == s {
			return b
		}
		b.press("j")
	}
	b.t.Fatalf("no task in state %s", s)
	return b
}
