package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The task operations are sqlq's (Ops); these are the pieces of them the
// task summaries (usage.go) read with columns of their own.

const taskColumns = sqlq.TaskColumns

func scanTask(row pgx.Row) (task.Task, error) { return sqlq.ScanTask(row, nil) }

// collect scans every row with scan and closes rows (usage.go, status.go).
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
	return sqlq.Collect(rows, func(r sqlq.Row) (T, error) { return scan(r) })
}
