package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
)

// The adapters through which the queries shared with the other SQL driver
// (store/sqlq) run here.

// reader runs shared queries on the pool.
type reader struct{ pool pool }

func (reader) Dialect() sqlq.Dialect { return sqlq.Postgres }

func (r reader) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	return r.pool.Query(ctx, sqlq.Postgres.Bind(q), args...)
}

// writer runs shared statements inside a write transaction.
type writer struct{ tx pgx.Tx }

func (writer) Dialect() sqlq.Dialect { return sqlq.Postgres }

func (w writer) Exec(ctx context.Context, q string, args ...any) error {
	_, err := w.tx.Exec(ctx, q, args...)
	return err
}
