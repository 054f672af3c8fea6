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

// mergeStates fills the engine with the merge queue's states, the returns
// it makes, and failed tasks whose last verdict was green.
func mergeStates(e *stubEngine) {
	now := e.snap.At
	green := &verify.Verdict{Status: verify.StatusOK, Command: "go test ./...", Passed: 120, Counted: true}
	baseline := &verify.Verdict{Status: verify.StatusOK, Command: "go test ./...", Passed: 118, Counted: true, Detail: verify.BaselineDetail}
	red := &verify.Verdict{Status: verify.StatusIncomplete, Command: "go test ./...", Passed: 119, Failed: 1, Counted: true}
	rows := []struct {
		title  string
		state  task.State
		reason string
		v      *verify.Verdict
	}{
		{"add rate limiting to the API", task.StateMergeQueued, "", green},
		{"fix the flaky login test", task.StateIntegrating, "", green},
		{"document the billing flow", task.StateMerged, "", green},
		{"rename the session cookie", task.StateQueued, string(task.ReasonMergeConflict), green},
		{"cache the price lookups", task.StateQueued, string(task.ReasonIntegrationRed), red},
		{"port the CLI to cobra", task.StateFailed, "attempts-exhausted", baseline},
		{"upgrade the ORM to v3", task.StateFailed, "commit-failed", green},
	}
	for i, r := range rows {
		t := task.Task{ID: fixtureID(i), Title: r.title, Goal: "goal", Verify: "go test ./...", Pipeline: task.DefaultPipeline(),
			State: r.state, Phase: task.PhaseImplement, Attempt: 1, Reason: r.reason,
			CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Duration(i+1) * time.Minute)}
		e.snap.Tasks = append(e.snap.Tasks, coord.TaskView{Task: t, Verdict: r.v})
		e.details[t.ID] = coord.Detail{Task: t, Events: []task.Event{{Kind: task.EvTaskAdded, TaskID: t.ID, Text: "added by ana", At: t.CreatedAt}}}
	}
}

// The list says what the merge queue is doing, never puts ✓ beside a
// failed task, and offers no M for a merged one.
func TestMergeStatesGolden(t *testing.T) {
	t.Parallel()
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			b := setup(t, mergeStates).size(sz[0], sz[1]).selectState(task.StateMerged)
			out := b.view()
			requireFits(t, out, sz[0], sz[1])
			golden.RequireEqual(t, out)
		})
	}
}

func TestMergeStatesSayWhatTheyMean(t *testing.T) {
	t.Parallel()
	b := setup(t, mergeStates).size(200, 50)
	screen := ansi.Strip(b.view())
	// The list is narrow beside the pane: the short forms of the states.
	for _, want := range []string{"to-merge", "merging", "merged", "conflict", "red-base"} {
		require.Contains(t, screen, want)
	}
	for _, l := range strings.Split(screen, "\n") {
		l, _, _ = strings.Cut(l, "│") // the list, not the pane beside it
		if strings.Contains(l, "failed") {
			require.NotContains(t, l, "✓", "no ✓ beside a failed task: %q", l)
		}
	}

	b.selectState(task.StateMerged)
	merged := b.m.selID
	require.NotContains(t, ansi.Strip(b.m.footer().hints(200)), "M merge", "a merged task offers no M")
	n := len(b.eng.sentCommands())
	b.press("M")
	require.NotEqual(t, modeConfirm, b.m.mode, "M on a merged task asks nothing")
	require.Len(t, b.eng.sentCommands(), n, "and sends nothing")
	require.Contains(t, ansi.Strip(b.view()), merged.Short()+" is merged already")

	b.press("k", "k") // the list is sorted: merge-queued is two rows up
	tv, _ := b.m.selected()
	require.Equal(t, task.StateMergeQueued, tv.Task.State)
	b.press("M")
	require.Len(t, b.eng.sentCommands(), n)
	require.Contains(t, ansi.Strip(b.view()), "is in the merge queue")
}
