package ui

import (
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// rowGlyph is the verdict mark of a list row, said about the task: a
// baseline verdict is not the task's result and gets no mark of its own,
// and a task that failed never shows ✓ whatever its last run said.
func rowGlyph(tv coord.TaskView) string {
	v := tv.Verdict
	switch {
	case v != nil && v.Baseline():
		return "·"
	case tv.Task.State == task.StateFailed && v != nil && v.Status == verify.StatusOK:
		return "✗"
	}
	return verdictGlyph(v)
}

// rowStateLabel is the state column of a list row: the state, except that
// a task the merge queue sent back says why while it waits to run again.
func rowStateLabel(t task.Task, short bool) string {
	if t.State == task.StateQueued {
		switch task.Reason(t.Reason) {
		case task.ReasonMergeConflict:
			return "conflict"
		case task.ReasonIntegrationRed:
			if short {
				return "red-base"
			}
			return "red-on-base"
		}
	}
	if short {
		switch t.State {
		case task.StateMergeQueued:
			return "to-merge"
		case task.StateIntegrating:
			return "merging"
		}
	}
	return stateLabel(t.State, short)
}

// noMerge says why M does nothing for the task, or "" when a merge can
// happen (the engine still has the last word).
func noMerge(tv coord.TaskView) string {
	id := tv.Task.ID.Short()
	switch tv.Task.State {
	case task.StateMerged:
		return fmt.Sprintf("%s is merged already: nothing to merge", id)
	case task.StateMergeQueued, task.StateIntegrating:
		return fmt.Sprintf("%s is in the merge queue (%s): it lands once its tests are green on the base", id, tv.Task.State)
	case task.StatePullOpen:
		return noMergePull(tv)
	case task.StateCompleted:
		return ""
	case task.StateAwaitingReview:
		return fmt.Sprintf("%s waits for review: a approves it first", id)
	}
	return fmt.Sprintf("nothing to merge: %s is %s, not approved", id, tv.Task.State)
}
