package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// migrationSignature adds the fleet key's signature to every task row
// (package sign); rows from before it have none until an engine that
// creates the key signs them.
const migrationSignature = `
ALTER TABLE tasks ADD COLUMN signature text NOT NULL DEFAULT '';
`

// TaskSign records the signature of a task that has none.
func (s *Store) TaskSign(ctx context.Context, id task.ID, signature string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE tasks SET signature = $1 WHERE id = $2 AND signature = ''`, signature, string(id))
		if err != nil {
			return fmt.Errorf("sign task %s: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("sign task %s: it is gone or already signed: %w", id, store.ErrConflict)
		}
		return nil
	})
}
