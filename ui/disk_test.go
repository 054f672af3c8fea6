package ui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// The verdict strip ends with what the task holds on disk where the whole
// line fits with it; on a narrow pane the disk use goes first, before the
// spend or the verdict lose anything.
func TestVerdictStripShowsDiskUseWhereItFits(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	tv := coord.TaskView{
		Verdict: &verify.Verdict{Status: verify.StatusOK, Command: "go test ./...", At: testNow},
		Usage:   coord.Usage{CostUSD: 0.0512, Models: []string{"opus"}},
		Disk:    coord.DiskUse{Worktree: 12 << 20, Recordings: 3 << 19, At: testNow},
	}
	wide := ansi.Strip(b.m.strips().verdict(tv, true, 120))
	require.Contains(t, wide, " · disk 14 MiB")
	require.Contains(t, wide, "spent $0.0512")

	narrowNoDisk := ansi.Strip(b.m.strips().verdict(coord.TaskView{Verdict: tv.Verdict, Usage: tv.Usage}, true, 40))
	narrow := ansi.Strip(b.m.strips().verdict(tv, true, 40))
	require.Equal(t, narrowNoDisk, narrow, "on a narrow pane the disk use gives way first")
	for w := 10; w <= 120; w++ {
		require.Equal(t, w, ansi.StringWidth(b.m.strips().verdict(tv, true, w)), "width %d", w)
	}

	// Nothing measured: no disk at all.
	require.NotContains(t, ansi.Strip(b.m.strips().verdict(coord.TaskView{Verdict: tv.Verdict}, true, 120)), "disk")
}
