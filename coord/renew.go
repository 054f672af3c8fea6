package coord

import (
	"context"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// renewLease rewrites a live task's lease row (a renewal, a new baseline, an
// extension, a new holder) with its events through the store's one
// transition (store.Renew), fenced by the lease's token: a task whose token
// or lease moved on refuses it with store.ErrStaleToken and nothing is
// written. The task keeps its state; the loop's view takes the row as
// written.
//
// A function of the loop's store and task map, not a method, so the loop's
// type does not grow (methods_test.go).
func renewLease(ctx context.Context, st store.Store, tasks map[task.ID]task.Task, at time.Time, l lease.Lease, evs ...task.Event) error {
	res, err := st.TaskTransition(ctx, store.Renew(l, at, evs...))
	if err != nil {
		return err
	}
	tasks[l.TaskID] = res.Task
	return nil
}
