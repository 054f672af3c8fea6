package ui

import (
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// rowState is the state column of a row: a task whose pull request is open
// on the forge ([finalise] pr) shows the pull request and its checks
// there ("PR #12 ✓"), the rest what rowStateLabel says.
func rowState(tv coord.TaskView, short bool) string {
	if tv.Task.State == task.StatePullOpen {
		if l := coord.PullLabel(tv.PR); l != "" {
			return l
		}
	}
	return rowStateLabel(tv.Task, short)
}

// noMergePull says why M does nothing for a task whose pull request is
// open: the forge merges it.
func noMergePull(tv coord.TaskView) string {
	n := 0
	if tv.PR != nil {
		n = tv.PR.Number
	}
	return fmt.Sprintf("%s is in pull request #%d: it is merged on the forge, and completes then", tv.Task.ID.Short(), n)
}
