package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// write runs fn in one IMMEDIATE transaction on the writer connection and
// commits it when fn returns nil; any error rolls everything back, the events
// fn appended included. It is bounded by the call timeout when ctx has no
// deadline of its own, as the PostgreSQL driver's calls are.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	ctx, cancel := store.Bound(ctx, s.timeout)
	defer cancel()
	s.wstmts.prepareLater(ctx)
	s.seqs.ended(false) // none of a transaction that never ended (a panic)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store %s: begin: %w", s.path, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		s.seqs.ended(false)
		return err
	}
	if err := tx.Commit(); err != nil {
		s.seqs.ended(false)
		return fmt.Errorf("store %s: commit: %w", s.path, err)
	}
	s.seqs.ended(true)
	s.changes.Notify()
	return nil
}

// Listen signals after every write this Store commits. Writes of other
// processes on the same file are not seen: SQLite has no notification.
func (s *Store) Listen(ctx context.Context) (<-chan struct{}, error) {
	return s.changes.Listen(ctx)
}

// appendEvents adds events to the ledger inside tx, and their usage to the
// sums; SQLite assigns seq.
func (s *Store) appendEvents(ctx context.Context, tx *sql.Tx, events []task.Event) error {
	if len(events) == 0 {
		return nil
	}
	// The statement was prepared once on the writer's only connection, so
	// binding it to the transaction reuses the compiled SQL.
	stmt := tx.StmtContext(ctx, s.insertEvent)
	defer stmt.Close()
	for _, e := range events {
		args := sqlq.EventArgs(sqlq.SQLite, e)
		res, err := stmt.ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("append %s event for task %s: %w", e.Kind, e.TaskID, err)
		}
		// seq is the row id; EventSeqs answers from it (seqs.go).
		if seq, err := res.LastInsertId(); err == nil {
			if id, ok := args[0].(string); ok {
				s.seqs.appended(id, seq)
			}
		}
	}
	return sqlq.AddUsage(ctx, txq{s, tx}, events...)
}
