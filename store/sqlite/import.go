package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// TaskImport stores a new task with its history in one transaction: a task
// resumed from a handoff arrives whole or not at all. Imported artifacts
// carry lease token 0: they were sealed on another machine, under a lease
// this store never granted.
func (s *Store) TaskImport(ctx context.Context, p store.TaskImportParams) error {
	if err := p.Check(); err != nil {
		return err
	}
	id := p.Task.ID
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := insertTask(ctx, tx, p.Task); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		for _, ss := range p.Sessions {
			if err := insertSession(ctx, tx, ss); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, a := range p.Artifacts {
			sum := sha256.Sum256(a.Content)
			a.SHA256 = hex.EncodeToString(sum[:])
			if err := insertArtifact(ctx, tx, a, 0); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, d := range p.Decisions {
			if err := insertDecision(ctx, tx, d); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, d := range p.DeadEnds {
			if err := insertDeadEnd(ctx, tx, d); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		return s.appendEvents(ctx, tx, p.Events)
	})
}
