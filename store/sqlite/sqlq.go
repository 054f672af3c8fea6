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

func (d driver) Reads() sqlq.Querier { return reads{q: d.s.r, stmts: d.s.rstmts} }

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

// reads runs shared queries on q (the read connections, or a
// transaction), through the statements of stmts when it is set: the read
// pool's, on the read connections.
type reads struct {
	q     sqlQuerier
	stmts *stmts
}

func (reads) Dialect() sqlq.Dialect { return sqlq.SQLite }

func (r reads) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	var rows *sql.Rows
	var err error
	if st := r.stmts.get(ctx, q); st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = r.q.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, err
	}
	return sqlqRows{rows}, nil
}

func (r reads) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	if st := r.stmts.get(ctx, q); st != nil {
		return row{st.QueryRowContext(ctx, args...)}
	}
	return row{r.q.QueryRowContext(ctx, q, args...)}
}

// txq runs shared statements inside a write transaction.
type txq struct {
	s  *Store
	tx *sql.Tx
}

func (txq) Dialect() sqlq.Dialect { return sqlq.SQLite }

// stmt is q prepared on the writer and bound to t's transaction, or nil
// (stmts.get); the caller closes it.
func (t txq) stmt(ctx context.Context, q string) *sql.Stmt {
	if t.s == nil {
		return nil
	}
	if st := t.s.wstmts.cached(q); st != nil {
		return t.tx.StmtContext(ctx, st)
	}
	return nil
}

func (t txq) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	st := t.stmt(ctx, q)
	if st == nil {
		return reads{q: t.tx}.Query(ctx, q, args...)
	}
	// The rows are read before the transaction goes on; closing the
	// transaction's statement closes rows still open, so it is closed
	// with them.
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return stmtRows{sqlqRows{rows}, st}, nil
}

func (t txq) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	st := t.stmt(ctx, q)
	if st == nil {
		return reads{q: t.tx}.QueryRow(ctx, q, args...)
	}
	return stmtRow{row{st.QueryRowContext(ctx, args...)}, st}
}

func (t txq) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if st := t.stmt(ctx, q); st != nil {
		res, err = st.ExecContext(ctx, args...)
		_ = st.Close()
	} else {
		res, err = t.tx.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// stmtRows are rows of a statement bound to a transaction, which they
// close with themselves.
type stmtRows struct {
	sqlqRows
	st *sql.Stmt
}

func (r stmtRows) Close() {
	r.sqlqRows.Close()
	_ = r.st.Close()
}

// stmtRow is a row of a statement bound to a transaction, closed once
// the row is scanned.
type stmtRow struct {
	row
	st *sql.Stmt
}

func (r stmtRow) Scan(dest ...any) error {
	defer func() { _ = r.st.Close() }()
	return r.row.Scan(dest...)
}

func (t txq) AppendEvents(ctx context.Context, events []task.Event) error {
	return t.s.appendEvents(ctx, t.tx, events)
}

func (t txq) BranchTaken(ctx context.Context, tk task.Task, err error) error {
	return branchTaken(ctx, t.tx, tk, err)
}
