package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// fence checks inside tx that token still holds task id (store.CheckFence).
// SQLite serialises writers, so nothing can grant or release the lease
// between this read and the write it guards.
func fence(ctx context.Context, tx *sql.Tx, what string, id task.ID, token int64) error {
	current, leaseToken, err := fenceRead(ctx, tx, id)
	if err != nil {
		return err
	}
	return store.CheckFence(what, id, token, current, leaseToken)
}

// fenceGrant checks inside tx that no newer token than token was granted
// on task id (store.CheckGrant).
func fenceGrant(ctx context.Context, tx *sql.Tx, what string, id task.ID, token int64) error {
	current, _, err := fenceRead(ctx, tx, id)
	if err != nil {
		return err
	}
	return store.CheckGrant(what, id, token, current)
}

// fenceRead reads task id's token and its lease row's (0 for none).
func fenceRead(ctx context.Context, tx *sql.Tx, id task.ID) (int64, int64, error) {
	var current, leaseToken int64
	err := tx.QueryRowContext(ctx, `SELECT t.token, COALESCE(l.token, 0) FROM tasks t
LEFT JOIN leases l ON l.task_id = t.id WHERE t.id = ?`, string(id)).Scan(&current, &leaseToken)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("read the lease of task %s: %w", id, err)
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
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := fence(ctx, tx, "append events", id, token); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, events)
	})
}
