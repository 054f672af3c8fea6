package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const baseColumns = `id, task_id, harness, model, fingerprint, fingerprint_hash, training,
created_at, last_hit_at, forks, retired_at, last_used_at`

// BaseInsert stores a newly trained base and its events.
func (s *Store) BaseInsert(ctx context.Context, b store.Base, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO bases (`+baseColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			b.ID, string(b.TaskID), b.Harness, b.Model, b.Fingerprint, b.FingerprintHash, b.Training,
			b.CreatedAt.UTC(), b.LastHitAt.UTC(), b.Forks, b.RetiredAt.UTC(), b.LastUsedAt.UTC())
		if err != nil {
			return fmt.Errorf("insert base %s of task %s: %w", b.ID, b.TaskID, err)
		}
		return appendEvents(ctx, tx, events)
	})
}

// BaseGet returns one base, or store.ErrNotFound.
func (s *Store) BaseGet(ctx context.Context, id string) (store.Base, error) {
	b, err := scanBase(s.pool.QueryRow(ctx, `SELECT `+baseColumns+` FROM bases WHERE id = $1`, id))
	if err != nil {
		return store.Base{}, notFound(err, "base "+id)
	}
	return b, nil
}

// BaseList returns a task's bases, or every base for an empty taskID,
// oldest first.
func (s *Store) BaseList(ctx context.Context, taskID task.ID) ([]store.Base, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+baseColumns+` FROM bases
WHERE $1 = '' OR task_id = $1 ORDER BY created_at, id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list bases of task %q: %w", taskID, err)
	}
	out, err := collect(rows, scanBase)
	if err != nil {
		return nil, fmt.Errorf("list bases of task %q: %w", taskID, err)
	}
	return out, nil
}

// BaseUpdate rewrites a base's last hit, last use, fork count and
// retirement, with its events; store.ErrNotFound when there is no such base.
func (s *Store) BaseUpdate(ctx context.Context, b store.Base, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE bases SET last_hit_at = $1, forks = $2, retired_at = $3, last_used_at = $4 WHERE id = $5`,
			b.LastHitAt.UTC(), b.Forks, b.RetiredAt.UTC(), b.LastUsedAt.UTC(), b.ID)
		if err != nil {
			return fmt.Errorf("update base %s: %w", b.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("base %s: %w", b.ID, store.ErrNotFound)
		}
		return appendEvents(ctx, tx, events)
	})
}

func scanBase(row pgx.Row) (store.Base, error) {
	var (
		b      store.Base
		taskID string
	)
	err := row.Scan(&b.ID, &taskID, &b.Harness, &b.Model, &b.Fingerprint, &b.FingerprintHash, &b.Training,
		&b.CreatedAt, &b.LastHitAt, &b.Forks, &b.RetiredAt, &b.LastUsedAt)
	b.TaskID = task.ID(taskID)
	b.CreatedAt, b.LastHitAt, b.RetiredAt, b.LastUsedAt = b.CreatedAt.UTC(), b.LastHitAt.UTC(), b.RetiredAt.UTC(), b.LastUsedAt.UTC()
	return b, err
}
