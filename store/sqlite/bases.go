package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const baseColumns = `id, task_id, harness, model, fingerprint, fingerprint_hash, training,
created_at, last_hit_at, forks, retired_at, last_used_at`

// BaseInsert stores a newly trained base and its events.
func (s *Store) BaseInsert(ctx context.Context, b store.Base, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO bases (`+baseColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.ID, string(b.TaskID), b.Harness, b.Model, b.Fingerprint, b.FingerprintHash, b.Training,
			timeText(b.CreatedAt), timeText(b.LastHitAt), b.Forks, timeText(b.RetiredAt), timeText(b.LastUsedAt))
		if err != nil {
			return fmt.Errorf("insert base %s of task %s: %w", b.ID, b.TaskID, err)
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// BaseGet returns one base, or store.ErrNotFound.
func (s *Store) BaseGet(ctx context.Context, id string) (store.Base, error) {
	b, err := scanBase(s.r.QueryRowContext(ctx, `SELECT `+baseColumns+` FROM bases WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Base{}, fmt.Errorf("base %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Base{}, fmt.Errorf("get base %s: %w", id, err)
	}
	return b, nil
}

// BaseList returns a task's bases, or every base for an empty taskID,
// oldest first.
func (s *Store) BaseList(ctx context.Context, taskID task.ID) ([]store.Base, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+baseColumns+` FROM bases
WHERE ? = '' OR task_id = ? ORDER BY created_at, id`, string(taskID), string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list bases of task %q: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.Base
	for rows.Next() {
		b, err := scanBase(rows)
		if err != nil {
			return nil, fmt.Errorf("list bases of task %q: %w", taskID, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list bases of task %q: %w", taskID, err)
	}
	return out, nil
}

// BaseUpdate rewrites a base's last hit, last use, fork count and retirement, with
// its events; store.ErrNotFound when there is no such base.
func (s *Store) BaseUpdate(ctx context.Context, b store.Base, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE bases SET last_hit_at = ?, forks = ?, retired_at = ?, last_used_at = ? WHERE id = ?`,
			timeText(b.LastHitAt), b.Forks, timeText(b.RetiredAt), timeText(b.LastUsedAt), b.ID)
		if err != nil {
			return fmt.Errorf("update base %s: %w", b.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("update base %s: %w", b.ID, err)
		} else if n == 0 {
			return fmt.Errorf("base %s: %w", b.ID, store.ErrNotFound)
		}
		return s.appendEvents(ctx, tx, events)
	})
}

func scanBase(sc scanner) (store.Base, error) {
	var (
		b                                  store.Base
		taskID, created, hit, retire, used string
	)
	err := sc.Scan(&b.ID, &taskID, &b.Harness, &b.Model, &b.Fingerprint, &b.FingerprintHash, &b.Training,
		&created, &hit, &b.Forks, &retire, &used)
	if err != nil {
		return b, err
	}
	b.TaskID = task.ID(taskID)
	if b.CreatedAt, err = parseTime(created); err != nil {
		return b, err
	}
	if b.LastHitAt, err = parseTime(hit); err != nil {
		return b, err
	}
	if b.RetiredAt, err = parseTime(retire); err != nil {
		return b, err
	}
	if b.LastUsedAt, err = parseTime(used); err != nil {
		return b, err
	}
	return b, nil
}
