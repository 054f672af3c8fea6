package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// screenHas reports whether some line of the frame holds s whole.
func screenHas(frame, s string) bool {
	for _, l := range strings.Split(ansi.Strip(frame), "\n") {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// wrap never breaks a line after a hyphen or inside a `quoted command`: a
// command or a harness name stays on one line, and a word longer than the
// width is still cut.
func TestWrapKeepsHyphenatedWordsWhole(t *testing.T) {
	t.Parallel()
	got := wrap("merge it with `orchestra-tui merge W6J2LC5E` now", 32)
	require.Equal(t, []string{"merge it with", "`orchestra-tui merge W6J2LC5E`", "now"}, got)
	for _, l := range wrap(strings.Repeat("ab-", 10), 8) {
		require.LessOrEqual(t, ansi.StringWidth(l), 8, l)
	}
	require.Equal(t, strings.Repeat("ab-", 10), strings.Join(wrap(strings.Repeat("ab-", 10), 8), ""))
}

// The approve banner shows its merge command on one line at 80 columns,
// where ansi.Wrap broke it as "`orchestra-" / "tui merge …`".
func TestApproveBannerKeepsTheCommandWhole(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	msg := "Approved. The work is on branch orchestra/x, 3 commits ahead of main; merge it with `orchestra-tui merge W6J2LC5E` (or `git merge orchestra/x`)."
	e.result = func(c coord.Command) (coord.Result, error) { return coord.Result{TaskID: c.TaskID, Message: msg}, nil }
	for _, w := range []int{70, 80, 100} {
		b := setupEngine(t, e).size(w, 24).selectState(task.StateAwaitingReview).press("a")
		require.True(t, screenHas(b.view(), "`orchestra-tui merge W6J2LC5E`"), "at %d columns:\n%s", w, ansi.Strip(b.view()))
		requireFits(t, b.view(), w, 24)
	}
}

// The new-task form lists opencode-run whole at 80 columns.
func TestFormKeepsHarnessNamesWhole(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.m.opt.Harnesses = []HarnessInfo{{Name: "claude", Found: true}, {Name: "codex", Found: true}, {Name: "codex-exec", Found: true},
		{Name: "gemini", Found: true}, {Name: "gemini-print", Found: true}, {Name: "opencode", Found: true}, {Name: "opencode-run", Found: true},
		{Name: "scripted", Found: true}, {Name: "shell", Found: true}}
	b.size(80, 24).press("n")
	for _, h := range b.m.opt.Harnesses {
		require.True(t, screenHas(b.view(), h.Name), "%s whole at 80 columns:\n%s", h.Name, ansi.Strip(b.view()))
	}
	requireFits(t, b.view(), 80, 24)
}
