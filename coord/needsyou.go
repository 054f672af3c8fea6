package coord

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// FlagNeedsYou starts the flag (TaskView.Flag) of a task whose session
// stopped at a dialog of its CLI's; the dialog's name and text follow.
const FlagNeedsYou = "Needs you: "

// noteDialog handles a worker's NeedsYou and Answered reports. A dialog
// is the operator's to answer (in focus mode): the task is flagged with
// the dialog's own text, the lease is held while it shows (tickLeases),
// and no attempt is charged. Once it is gone the launch's clock starts
// again and its confirmation goes on. It sees the loop and the run.
func noteDialog(ctx context.Context, loop loopView, r *run, rep worker.Report) {
	switch rep.Kind {
	case worker.NeedsYou:
		if r.confirmed || rep.Text == r.needsYou {
			return
		}
		r.needsYou = rep.Text
		loop.record(ctx, loop.event(r.taskID, r.sessionID, task.EvSessionNeedsYou, fmt.Sprintf(
			"Session %s needs you: %s. Answer it in focus mode (enter on the task); the lease is held and no attempt is charged meanwhile.",
			short(r.sessionID), rep.Text)))
	case worker.Answered:
		if r.needsYou == "" {
			return
		}
		r.needsYou = ""
		r.launched = loop.now() // the launch timeout runs again, whole, as WaitReady's does
		loop.record(ctx, loop.event(r.taskID, r.sessionID, task.EvSessionAnswered, fmt.Sprintf(
			"Session %s: the dialog was answered; its launch is being confirmed.", short(r.sessionID))))
	}
}

// flagOf is the flag a task shows in the list: the dialog its session (r,
// nil for none) waits at, the limit it waits for, else why it cannot be
// placed (placed, the loop's flag).
func flagOf(r *run, placed string) string {
	if r != nil && r.needsYou != "" && !r.confirmed {
		return FlagNeedsYou + r.needsYou
	}
	if r != nil && r.limit != nil {
		return r.limit.flag()
	}
	return placed
}
