package sqlq

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Transitions is the store.Store operations guarded by a task's fencing
// token that both drivers run the same way: transitions, leases and fenced
// event appends. A driver's Store embeds it next to Ops, on the same
// Driver; it is a type of its own so that neither grows past the method
// limit of methods_test.go.
type Transitions struct {
	D Driver
}

// fence checks inside tx that token still holds task id (store.CheckFence).
// Nothing can grant or release the lease between this read and the write
// it guards: SQLite serialises writers, and PostgreSQL locks the task row
// (FOR UPDATE) as every grant and transition locks it.
func fence(ctx context.Context, tx Tx, what string, id task.ID, token int64) error {
	current, leaseToken, err := fenceRead(ctx, tx, id)
	if err != nil {
		return err
	}
	return store.CheckFence(what, id, token, current, leaseToken)
}

// fenceGrant checks inside tx that no newer token than token was granted
// on task id (store.CheckGrant).
func fenceGrant(ctx context.Context, tx Tx, what string, id task.ID, token int64) error {
	current, _, err := fenceRead(ctx, tx, id)
	if err != nil {
		return err
	}
	return store.CheckGrant(what, id, token, current)
}

// fenceRead reads task id's token and its lease row's (0 for none),
// locking the task row where the dialect locks rows.
func fenceRead(ctx context.Context, tx Tx, id task.ID) (int64, int64, error) {
	var current, leaseToken int64
	err := tx.QueryRow(ctx, `SELECT t.token, COALESCE((SELECT l.token FROM leases l WHERE l.task_id = t.id), 0)
FROM tasks t WHERE t.id = ?`+tx.Dialect().forUpdate(), string(id)).Scan(&current, &leaseToken)
	if err != nil {
		return 0, 0, notFound(err, "read the lease of", "task "+string(id))
	}
	return current, leaseToken, nil
}

// EventAppendFenced appends events of one task while token holds it.
func (o Transitions) EventAppendFenced(ctx context.Context, token int64, events ...task.Event) error {
	if len(events) == 0 {
		return nil
	}
	id, err := store.FencedTask(events)
	if err != nil {
		return err
	}
	return o.D.Write(ctx, func(tx Tx) error {
		if err := fence(ctx, tx, "append events", id, token); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, events)
	})
}
