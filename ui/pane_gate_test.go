package ui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestGateRunningIsSaid checks a running task between its session's end and
// the verdict says the verify gate is at work, not just "no live session".
func TestGateRunningIsSaid(t *testing.T) {
	t.Parallel()
	m := &Model{snap: coord.Snapshot{Tasks: []coord.TaskView{{
		Task: task.Task{ID: "01GATE", State: task.StateRunning, Phase: task.PhaseImplement, Verify: "go test ./..."},
		Gate: true,
	}}}}
	msg := m.noPane("01GATE")
	require.True(t, strings.Contains(msg, "verify gate is re-running go test ./..."), msg)
}
