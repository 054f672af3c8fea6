package ui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// A task's first verify run is "1 run", not "1 runs".
func TestVerdictHistoryPlural(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState)
	rec := store.VerdictRecord{Phase: task.PhaseFrame, Verdict: verify.Verdict{Status: verify.StatusIncomplete, Command: "go test ./...", ExitCode: 1, At: testNow}}
	one := ansi.Strip(b.m.tabs.verdictContent(nil, []store.VerdictRecord{rec}))
	require.Contains(t, one, "── history (1 run) ──")
	two := ansi.Strip(b.m.tabs.verdictContent(nil, []store.VerdictRecord{rec, rec}))
	require.Contains(t, two, "── history (2 runs) ──")
}
