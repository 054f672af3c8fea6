package sqlite

import (
	"context"
	"database/sql"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The task operations are sqlq's (Ops); these are the pieces of them the
// lease, session and transition code of this driver reads inside its own
// transactions.

const taskColumns = sqlq.TaskColumns

// taskGuard reads the state and token a guarded write checks, inside its
// transaction.
func taskGuard(ctx context.Context, tx *sql.Tx, id task.ID) (task.State, int64, error) {
	return sqlq.TaskGuard(ctx, txq{nil, tx}, id)
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanTask(sc scanner) (task.Task, error) { return sqlq.ScanTask(sc, nil) }

// scanTaskToken scans the task columns followed, when token is not nil, by
// the task's lease token.
func scanTaskToken(sc scanner, token *int64) (task.Task, error) { return sqlq.ScanTask(sc, token) }
