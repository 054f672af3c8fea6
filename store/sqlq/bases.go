package sqlq

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const baseColumns = `id, task_id, harness, model, fingerprint, fingerprint_hash, training,
created_at, last_hit_at, forks, retired_at, last_used_at`

// BaseInsert stores a newly trained base and its events.
func (o Ops) BaseInsert(ctx context.Context, b store.Base, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		d := tx.Dialect()
		_, err := tx.Exec(ctx, `INSERT INTO bases (`+baseColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.ID, string(b.TaskID), b.Harness, b.Model, b.Fingerprint, b.FingerprintHash, b.Training,
			d.Time(b.CreatedAt), d.Time(b.LastHitAt), b.Forks, d.Time(b.RetiredAt), d.Time(b.LastUsedAt))
		if err != nil {
			return fmt.Errorf("insert base %s of task %s: %w", b.ID, b.TaskID, err)
		}
		return nil
	})
}

// BaseGet returns one base, or store.ErrNotFound.
func (o Ops) BaseGet(ctx context.Context, id string) (store.Base, error) {
	return get(ctx, o.D.Reads(), "base "+id, scanBase, `SELECT `+baseColumns+` FROM bases WHERE id = ?`, id)
}

// BaseList returns a task's bases, or every base for an empty taskID,
// oldest first.
func (o Ops) BaseList(ctx context.Context, taskID task.ID) ([]store.Base, error) {
	return list(ctx, o.D.Reads(), fmt.Sprintf("bases of task %q", taskID), scanBase, `SELECT `+baseColumns+` FROM bases
WHERE ? = '' OR task_id = ? ORDER BY created_at, id`, string(taskID), string(taskID))
}

// BaseUpdate rewrites a base's last hit, last use, fork count and
// retirement, with its events; store.ErrNotFound when there is no such base.
func (o Ops) BaseUpdate(ctx context.Context, b store.Base, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		d := tx.Dialect()
		n, err := tx.Exec(ctx, `UPDATE bases SET last_hit_at = ?, forks = ?, retired_at = ?, last_used_at = ? WHERE id = ?`,
			d.Time(b.LastHitAt), b.Forks, d.Time(b.RetiredAt), d.Time(b.LastUsedAt), b.ID)
		if err != nil {
			return fmt.Errorf("update base %s: %w", b.ID, err)
		}
		if n == 0 {
			return fmt.Errorf("base %s: %w", b.ID, store.ErrNotFound)
		}
		return nil
	})
}

func scanBase(row Row) (store.Base, error) {
	var (
		b      store.Base
		taskID string
	)
	err := row.Scan(&b.ID, &taskID, &b.Harness, &b.Model, &b.Fingerprint, &b.FingerprintHash, &b.Training,
		At(&b.CreatedAt), At(&b.LastHitAt), &b.Forks, At(&b.RetiredAt), At(&b.LastUsedAt))
	b.TaskID = task.ID(taskID)
	return b, err
}
