package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The task operations are sqlq's (Ops); these are the pieces of them the
// lease, session and transition code of this driver reads inside its own
// transactions.

const taskColumns = sqlq.TaskColumns

// taskGuard reads the state and token a guarded write checks, inside its
// transaction (which holds the write lock, so they cannot change under it).
func taskGuard(ctx context.Context, tx pgx.Tx, id task.ID) (task.State, int64, error) {
	return sqlq.TaskGuard(ctx, txq{tx}, id)
}

func scanTask(row pgx.Row) (task.Task, error) { return sqlq.ScanTask(row, nil) }

// scanTaskToken scans the task columns followed, when token is not nil, by
// the task's lease token.
func scanTaskToken(row pgx.Row, token *int64) (task.Task, error) { return sqlq.ScanTask(row, token) }

// collect scans every row with scan and closes rows.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
	return sqlq.Collect(rows, func(r sqlq.Row) (T, error) { return scan(r) })
}
