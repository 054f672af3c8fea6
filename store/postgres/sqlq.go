package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The executor through which the store operations shared with the other
// SQL driver (store/sqlq's Ops, Transitions and Sessions, which Store
// embeds) run here: reads on the pool, bounded by the call timeout, writes
// in write's transaction under the write lock. Every query is bound from ?
// to $n here.

// driver is the Store as sqlq's operations run on it.
type driver struct{ s *Store }

func (d driver) Reads() sqlq.Querier { return reads{d.s.pool} }

func (d driver) Write(ctx context.Context, fn func(sqlq.Tx) error) error {
	return d.s.write(ctx, func(tx pgx.Tx) error { return fn(txq{tx}) })
}

// pgxQuerier is what both the pool and a pgx.Tx offer.
type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// row reports pgx's no-rows as sqlq's.
type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error {
	if err := r.Row.Scan(dest...); errors.Is(err, pgx.ErrNoRows) {
		return sqlq.ErrNoRows
	} else {
		return err
	}
}

// reads runs shared queries on q (the pool, or a transaction).
type reads struct{ q pgxQuerier }

func (reads) Dialect() sqlq.Dialect { return sqlq.Postgres }

func (r reads) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	return r.q.Query(ctx, sqlq.Postgres.Bind(q), args...)
}

func (r reads) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	return row{r.q.QueryRow(ctx, sqlq.Postgres.Bind(q), args...)}
}

// txq runs shared statements inside a write transaction.
type txq struct{ tx pgx.Tx }

func (txq) Dialect() sqlq.Dialect { return sqlq.Postgres }

func (t txq) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	return reads{t.tx}.Query(ctx, q, args...)
}

func (t txq) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	return reads{t.tx}.QueryRow(ctx, q, args...)
}

func (t txq) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, sqlq.Postgres.Bind(q), args...)
	return tag.RowsAffected(), err
}

func (t txq) AppendEvents(ctx context.Context, events []task.Event) error {
	return appendEvents(ctx, t.tx, events)
}

// BranchTaken leaves the holder to write, which reads it once the aborted
// transaction has rolled back.
func (t txq) BranchTaken(_ context.Context, tk task.Task, err error) error {
	return branchTaken(tk, err)
}
