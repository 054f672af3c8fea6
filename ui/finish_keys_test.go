package ui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// R retries the selected task; M merges it after a question, and no
// leaves everything as it was.
func TestRetryAndMergeKeys(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40).selectState(task.StateFailed)
	failed := b.m.selID
	b.press("R")
	cmds := b.eng.sentCommands()
	require.Equal(t, coord.CmdRetry, cmds[len(cmds)-1].Kind)
	require.Equal(t, failed, cmds[len(cmds)-1].TaskID)

	b.selectState(task.StateCompleted)
	done := b.m.selID
	n := len(b.eng.sentCommands())
	b.press("M")
	require.Equal(t, modeConfirm, b.m.mode, "merge asks first")
	require.Contains(t, ansi.Strip(b.view()), "Merge task "+done.Short())
	b.press("n")
	require.Len(t, b.eng.sentCommands(), n, "no merges nothing")
	b.press("M", "y")
	cmds = b.eng.sentCommands()
	require.Len(t, cmds, n+1)
	require.Equal(t, coord.CmdMerge, cmds[n].Kind)
	require.Equal(t, done, cmds[n].TaskID)
}
