package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// migrationSignature adds the fleet key's signature to every task row
// (package sign); rows from before it have none until an engine that
// creates the key signs them.
const migrationSignature = `
ALTER TABLE tasks ADD COLUMN signature TEXT NOT NULL DEFAULT '';
`

// TaskSign records the signature of a task that has none.
func (s *Store) TaskSign(ctx context.Context, id task.ID, signature string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET signature = ? WHERE id = ? AND signature = ''`, signature, string(id))
		if err != nil {
			return fmt.Errorf("sign task %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("sign task %s: it is gone or already signed: %w", id, store.ErrConflict)
		}
		return nil
	})
}
