package ui

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestRowShowsThePullRequestAndItsChecks(t *testing.T) {
	t.Parallel()
	tv := coord.TaskView{Task: task.Task{ID: "01JAAAAAAAPULLREQ", State: task.StatePullOpen}, PR: &task.PullData{Number: 12, Open: true, Checks: "success"}}
	require.Equal(t, "PR #12 ✓", rowState(tv, false))
	tv.PR.Checks = "failure"
	require.Equal(t, "PR #12 ✗", rowState(tv, true))
	tv.PR.Checks = "pending"
	require.Equal(t, "PR #12 …", rowState(tv, false))
	require.Equal(t, "APULLREQ is in pull request #12: it is merged on the forge, and completes then", noMerge(tv))
	tv.PR = nil
	require.Equal(t, "pr-open", rowState(tv, false), "read back before its first poll")
}
