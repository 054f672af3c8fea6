package coord

import (
	"context"

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
func (c *Coordinator) renewLease(ctx context.Context, l lease.Lease, evs ...task.Event) error {
	res, err := c.st.TaskTransition(ctx, store.Renew(l, c.now(), evs...))
	if err != nil {
		return err
	}
	c.tasks[l.TaskID] = res.Task
	return nil
}
