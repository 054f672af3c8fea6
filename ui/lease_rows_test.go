package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestLeaseStripWastesNoRow: under 100 columns the lease strip may wrap to
// a second line, but only when its text needs it. "lease · none" and a
// lease that fits on one line are followed at once by the verdict strip,
// and the row they would have left blank goes to the tab.
func TestLeaseStripWastesNoRow(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {99, 30}} {
		for _, c := range []struct {
			state task.State
			rows  int // lease strip lines
		}{
			{task.StateQueued, 1},  // lease · none (queued)
			{task.StateLeased, 1},  // a lease with no decision yet fits
			{task.StateRunning, 2}, // its last decision wraps
		} {
			t.Run(fmt.Sprintf("%s_%dx%d", c.state, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				b := setup(t, everyState).size(sz[0], sz[1]).selectState(c.state)
				out := b.view()
				requireFits(t, out, sz[0], sz[1])
				lines := strings.Split(ansi.Strip(out), "\n")
				at := -1
				for i, l := range lines {
					if strings.HasPrefix(l, "lease ") {
						at = i
						break
					}
				}
				require.GreaterOrEqual(t, at, 0, "no lease strip in\n%s", ansi.Strip(out))
				for i := at; i < at+c.rows; i++ {
					require.NotEmpty(t, strings.TrimSpace(lines[i]), "lease strip line %d is blank in\n%s", i-at, ansi.Strip(out))
				}
				require.True(t, strings.HasPrefix(lines[at+c.rows], "verdict "),
					"the verdict strip should follow the lease strip's %d line(s), got %q in\n%s", c.rows, lines[at+c.rows], ansi.Strip(out))
				require.Equal(t, sz[1]-3-3-b.m.layout().listH-c.rows, b.m.layout().contentH, "the tab gets every row the strips leave")
			})
		}
	}
}

// On a wide strip too, a last decision too long for one line wraps to a
// second instead of being cut.
func TestLeaseStripWrapsALongDecisionWhenWide(t *testing.T) {
	t.Parallel()
	long := func(e *stubEngine) {
		everyState(e)
		for i := range e.snap.Tasks {
			if l := e.snap.Tasks[i].Lease; l != nil && e.snap.Tasks[i].Task.State == task.StateRunning {
				c := *l
				c.LastDecision, c.LastReasonText = "refuse", "The lease was not renewed: the pane made no real progress since the last renewal, and the worktree did not change."
				e.snap.Tasks[i].Lease = &c
			}
		}
	}
	b := setup(t, long).size(200, 50).selectState(task.StateRunning)
	out := ansi.Strip(b.view())
	require.Contains(t, out, "and the worktree did not change)", out)
	for _, l := range strings.Split(out, "\n") {
		if _, strip, ok := strings.Cut(l, "│"); ok && (strings.HasPrefix(strip, "lease ") || strings.HasPrefix(strip, "last: ")) {
			require.NotContains(t, strip, "…", "nothing of the strip is cut")
		}
	}
}

// A task with no verdict says so once: "verdict · not run yet", not with
// the list's no-verdict glyph doubling the separator.
func TestVerdictStripOfNoVerdict(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(80, 24).selectState(task.StateQueued)
	out := ansi.Strip(b.view())
	require.Contains(t, out, "\nverdict · not run yet ", out)
	require.NotContains(t, out, "· · not run yet", out)
}
