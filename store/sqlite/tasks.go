package sqlite

import (
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The task operations are sqlq's (Ops); these are the pieces of them the
// task list's summaries (summary.go) read with columns of their own.

const taskColumns = sqlq.TaskColumns

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanTask(sc scanner) (task.Task, error) { return sqlq.ScanTask(sc, nil) }
