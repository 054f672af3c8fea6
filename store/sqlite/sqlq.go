package sqlite

import (
	"context"
	"database/sql"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
)

// The adapters through which the queries shared with the other SQL driver
// (store/sqlq) run here.

type sqlqRows struct{ *sql.Rows }

func (r sqlqRows) Close() { _ = r.Rows.Close() }

// reader runs shared queries on the read connections.
type reader struct{ db *sql.DB }

func (reader) Dialect() sqlq.Dialect { return sqlq.SQLite }

func (r reader) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	rows, err := r.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlqRows{rows}, nil
}

// writer runs shared statements inside a write transaction.
type writer struct{ tx *sql.Tx }

func (writer) Dialect() sqlq.Dialect { return sqlq.SQLite }

func (w writer) Exec(ctx context.Context, q string, args ...any) error {
	_, err := w.tx.ExecContext(ctx, q, args...)
	return err
}
