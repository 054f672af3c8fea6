package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// fence checks inside tx that token still holds task id (store.CheckFence).
// The task row is locked (FOR UPDATE) as every grant and transition locks
// it, so no takeover commits between this check and the write it guards.
func fence(ctx context.Context, tx pgx.Tx, what string, id task.ID, token int64) error {
	current, leaseToken, err := fenceRead(ctx, tx, id)
	if err != nil {
		return err
	}
	return store.CheckFence(what, id, token, current, leaseToken)
}

// fenceGrant checks inside tx that no newer token than token was granted
// on task id (store.CheckGrant).
func fenceGrant(ctx context.Context, tx pgx.Tx, what string, id task.ID, token int64) error {
	current, _, err := fenceRead(ctx, tx, id)
	if err != nil {
		return err
	}
	return store.CheckGrant(what, id, token, current)
}

// fenceRead reads task id's token and its lease row's (0 for none),
// locking the task row.
func fenceRead(ctx context.Context, tx pgx.Tx, id task.ID) (int64, int64, error) {
	var current, leaseToken int64
	err := tx.QueryRow(ctx, `SELECT t.token, COALESCE((SELECT l.token FROM leases l WHERE l.task_id = t.id), 0)
FROM tasks t WHERE t.id = $1 FOR UPDATE`, string(id)).Scan(&current, &leaseToken)
	if err != nil {
		return 0, 0, notFound(err, "task "+string(id))
	}
	return current, leaseToken, nil
}

// EventAppendFenced appends events of one task while token holds it.
func (s *Store) EventAppendFenced(ctx context.Context, token int64, events ...task.Event) error {
	if len(events) == 0 {
		return nil
	}
	id, err := store.FencedTask(events)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, "append events", id, token); err != nil {
			return err
		}
		return appendEvents(ctx, tx, events)
	})
}
