package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// queueOffline is approve and merge with [finalise] queue set and no
// engine running: the task joins the merge queue, which integrates it when
// an engine starts. Nothing merges around the queue.
func queueOffline(ctx context.Context, st store.Store, id task.ID, cmd coord.Command, stdout, stderr io.Writer) int {
	t, err := st.TaskGet(ctx, id)
	if err != nil {
		return fail(stderr, err)
	}
	author := cmd.Author
	if author == "" {
		author = "operator"
	}
	text := fmt.Sprintf("Approved by %s; queued for the merge queue: %s is integrated onto the base and lands only if %s is green there.", author, t.Branch, t.Verify)
	switch {
	case cmd.Kind == coord.CmdMerge && t.State == task.StateAwaitingReview:
		return fail(stderr, fmt.Errorf("task %s waits for review: approve it first (`orchestra-tui approve %s`, or a in the console)", id.Short(), id.Short()))
	case cmd.Kind == coord.CmdMerge:
		text = fmt.Sprintf("Queued for the merge queue by merge: %s is integrated onto the base and lands only if %s is green there.", t.Branch, t.Verify)
	case t.State != task.StateAwaitingReview:
		return fail(stderr, fmt.Errorf("cannot approve task %s: it is %s, not awaiting review", id.Short(), t.State))
	}
	if _, err := coord.QueueMergeOffline(ctx, st, id, text, time.Now()); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintln(stdout, "queued for merge; the merge queue integrates it when a console or `run --headless` starts, and lands it only if its tests are green on the base")
	return 0
}
