package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// allEnded is a repository the morning after: every task ended, as
// completed, failed or cancelled, at different times.
func allEnded(e *stubEngine) {
	now := e.snap.At
	ends := []struct {
		title  string
		state  task.State
		reason string
		v      *verify.Verdict
		ago    time.Duration
	}{
		{"fix the flaky login test", task.StateCompleted, "", &verify.Verdict{Status: verify.StatusOK, Passed: 120, Counted: true}, 7 * time.Hour},
		{"port the CLI to cobra", task.StateFailed, "attempts exhausted", &verify.Verdict{Status: verify.StatusIncomplete, Passed: 40, Failed: 3, Counted: true}, 5 * time.Hour},
		{"add rate limiting to the API", task.StateCompleted, "", &verify.Verdict{Status: verify.StatusOK, Passed: 88, Counted: true}, 3 * time.Hour},
		{"upgrade the ORM to v3", task.StateCancelled, "cancelled by ana", nil, 2 * time.Hour},
		{"document the billing flow", task.StateCompleted, "", &verify.Verdict{Status: verify.StatusOK, Passed: 12, Counted: true}, 40 * time.Minute},
	}
	for i, x := range ends {
		t := task.Task{ID: fixtureID(i), Title: x.title, Goal: "goal", Verify: "go test ./...", Pipeline: task.DefaultPipeline(),
			State: x.state, Phase: task.PhaseReview, Attempt: 1, Reason: x.reason, CreatedAt: now.Add(-x.ago - time.Hour), UpdatedAt: now.Add(-x.ago)}
		e.snap.Tasks = append(e.snap.Tasks, coord.TaskView{Task: t, Verdict: x.v})
		e.details[t.ID] = coord.Detail{Task: t, Events: []task.Event{{Kind: task.EvTaskAdded, TaskID: t.ID, Text: "added by ana", At: t.CreatedAt}}}
	}
}

var goldenSizes = [][2]int{{80, 24}, {120, 40}, {200, 50}}

// scenarios are the screens the golden files pin down, each built from a
// fresh console at a given size.
var scenarios = []struct {
	name  string
	fill  func(*stubEngine)
	drive func(*bundle)
}{
	{"empty", nil, func(*bundle) {}},
	{"states", everyState, func(*bundle) {}},
	{"live", everyState, func(b *bundle) { b.selectState(task.StateRunning) }},
	{"focus", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("enter") }},
	{"zoom", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("z") }},
	{"correction", everyState, func(b *bundle) {
		b.selectState(task.StateRunning).press("c").typeText("keep the public API unchanged")
	}},
	{"resume", everyState, func(b *bundle) {
		b.selectState(task.StateRunning).press("n", "ctrl+r").typeText("handoff.json")
	}},
	{"brief", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("2") }},
	{"verdict", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("3") }},
	{"events", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("4") }},
	{"grid", everyState, func(b *bundle) { b.press("g") }},
	{"quit", everyState, func(b *bundle) { b.press("q") }},
	{"help", everyState, func(b *bundle) { b.press("?") }},
	{"history", allEnded, func(*bundle) {}},
	{"approve", func(e *stubEngine) {
		everyState(e)
		e.result = func(c coord.Command) (coord.Result, error) {
			return coord.Result{TaskID: c.TaskID, Message: "Approved. The work is on branch orchestra/01jq8z4task0000000000004, 3 commits ahead of main; merge it with `orchestra-tui merge W6J2LC5E` (or `git merge orchestra/01jq8z4task0000000000004`)."}, nil
		}
	}, func(b *bundle) { b.selectState(task.StateAwaitingReview).press("a") }},
	{"banner", everyState, func(b *bundle) {
		b.selectState(task.StateRunning).send(BannerMsg{Title: "DEMO FINISHED · every proof held · the run stays open to explore · q quits", Tone: ToneOK,
			Lines: []string{"✓ the relaunched implement brief names the first attempt's files and puts the correction above the plan", "✓ the tests pass"}})
	}},
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		for _, sz := range goldenSizes {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				b := setup(t, sc.fill).size(sz[0], sz[1])
				sc.drive(b)
				out := b.view()
				requireFits(t, out, sz[0], sz[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

// requireFits checks a frame neither overflows the terminal's width nor
// has more lines than its height.
func requireFits(t testing.TB, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	require.LessOrEqual(t, len(lines), h, "frame has more lines than the terminal at %dx%d", w, h)
	for i, l := range lines {
		require.LessOrEqual(t, ansi.StringWidth(l), w, "line %d overflows at %dx%d: %q", i, w, h, ansi.Strip(l))
	}
}

func TestWidthSweep(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, sc.fill)
			b.size(120, 40)
			sc.drive(b)
			for _, h := range []int{16, 24, 33, 50} {
				for w := 60; w <= 220; w += 7 {
					b.size(w, h)
					requireFits(t, b.view(), w, h)
				}
			}
		})
	}
}

func TestTooSmall(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(59, 20)
	require.Contains(t, ansi.Strip(b.view()), "terminal too small: need at least 60x16, have 59x20")
	b.size(100, 15)
	require.Contains(t, ansi.Strip(b.view()), "have 100x15")
	requireFits(t, b.view(), 100, 15)
}
