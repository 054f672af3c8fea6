package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The executor through which the store operations shared with the other
// SQL driver (store/sqlq's Ops, Transitions and Sessions, which Store
// embeds) run here: reads on the read connections, writes in write's
// IMMEDIATE transaction.

// driver is the Store as sqlq's operations run on it.
type driver struct{ s *Store }

func (d driver) Reads() sqlq.Querier { return reads{d.s.r} }

func (d driver) Write(ctx context.Context, fn func(sqlq.Tx) error) error {
	return d.s.write(ctx, func(tx *sql.Tx) error { return fn(txq{d.s, tx}) })
}

// sqlQuerier is what both *sql.DB and *sql.Tx offer.
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type sqlqRows struct{ *sql.Rows }

func (r sqlqRows) Close() { _ = r.Rows.Close() }

// row reports database/sql's no-rows as sqlq's.
type row struct{ *sql.Row }

func (r row) Scan(dest ...any) error {
	if err := r.Row.Scan(dest...); errors.Is(err, sql.ErrNoRows) {
		return sqlq.ErrNoRows
	} else {
		return err
	}
}

// reads runs shared queries on q (the read connections, or a transaction).
type reads struct{ q sqlQuerier }

func (reads) Dialect() sqlq.Dialect { return sqlq.SQLite }

func (r reads) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlqRows{rows}, nil
}

func (r reads) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	return row{r.q.QueryRowContext(ctx, q, args...)}
}

// txq runs shared statements inside a write transaction.
type txq struct {
	s  *Store
	tx *sql.Tx
}

func (txq) Dialect() sqlq.Dialect { return sqlq.SQLite }

func (t txq) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	return reads{t.tx}.Query(ctx, q, args...)
}

func (t txq) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	return reads{t.tx}.QueryRow(ctx, q, args...)
}

func (t txq) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t txq) AppendEvents(ctx context.Context, events []task.Event) error {
	return t.s.appendEvents(ctx, t.tx, events)
}

func (t txq) BranchTaken(ctx context.Context, tk task.Task, err error) error {
	return branchTaken(ctx, t.tx, tk, err)
}
