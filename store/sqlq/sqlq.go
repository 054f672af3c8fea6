// Package sqlq is the query code the SQL drivers (store/sqlite,
// store/postgres) share: one implementation of each store operation they
// run alike (Ops, Transitions and Sessions, which each driver's Store
// embeds), its queries written once with ? placeholders and its scanning
// done once, over a thin executor each driver adapts its connections to
// (Querier, Tx, Driver). What differs between the two SQL dialects is kept
// in one place (Dialect): the placeholders, how a time is bound, how a list
// is matched, which rows a write locks (FOR UPDATE), how a claim finds its
// task. What only one database does (SQLite's pragmas and prepared event
// insert, PostgreSQL's advisory write lock, batches, NOTIFY and store
// clock) and the driver's own connection handling and migrations stay in
// its driver.
package sqlq

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Dialect is what differs between the SQL the drivers speak.
type Dialect int

const (
	// SQLite writes placeholders as ?, keeps times as fixed-width UTC
	// text ("" for none) and binds a list element by element.
	SQLite Dialect = iota
	// Postgres numbers placeholders ($1, $2, ...), keeps times as
	// timestamptz (NULL for none) and binds a list as one array.
	Postgres
)

// bound caches Postgres.Bind: the shared statements are a few dozen
// constants and variants of them, bound on every call. A query built from
// data (a list of n placeholders) would grow it without end: lists are
// bound as one array (In) on PostgreSQL.
var bound sync.Map // string -> string

// Bind returns q, written with ? placeholders, in d's placeholders. The
// shared queries hold no ? but their placeholders (no string literal, no
// JSON operator), which TestBind keeps true. The executors bind every
// query they are given, so the shared code never calls it.
func (d Dialect) Bind(q string) string {
	if d != Postgres || !strings.Contains(q, "?") {
		return q
	}
	if b, ok := bound.Load(q); ok {
		return b.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	bound.Store(q, s)
	return s
}

// Time is t as d's time columns hold it.
func (d Dialect) Time(t time.Time) any {
	if d == Postgres {
		return t.UTC()
	}
	return TimeText(t)
}

// OptTime is t for a time column that may hold none: "" on SQLite, NULL on
// PostgreSQL, for the zero time.
func (d Dialect) OptTime(t time.Time) any {
	switch {
	case !t.IsZero():
		return d.Time(t)
	case d == Postgres:
		return nil
	default:
		return ""
	}
}

// In is the condition that column is one of vals, and its arguments:
// column IN (?, ?, ...) on SQLite, column = ANY(?) with one array on
// PostgreSQL. vals must not be empty.
func (d Dialect) In(column string, vals []string) (string, []any) {
	if d == Postgres {
		return column + ` = ANY(?)`, []any{vals}
	}
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	return column + ` IN (?` + strings.Repeat(`, ?`, len(vals)-1) + `)`, args
}

// forUpdate is what a read inside a write transaction adds to lock the
// rows it reads: FOR UPDATE on PostgreSQL, whose writers lock the rows they
// change; nothing on SQLite, where one writer at a time holds the database.
func (d Dialect) forUpdate() string {
	if d == Postgres {
		return ` FOR UPDATE`
	}
	return ""
}

// maxIn is how many values one In may bind: SQLite limits a statement's
// parameters; PostgreSQL binds the list as one.
func (d Dialect) maxIn() int {
	if d == Postgres {
		return 1 << 30
	}
	return 500
}

// ErrNoRows is what a Row's Scan returns when the query found no row,
// whichever driver ran it.
var ErrNoRows = errors.New("no rows in result set")

// Row is one row of a result, or a query's only row.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a query's result as both drivers' rows offer it.
type Rows interface {
	Row
	Next() bool
	Err() error
	Close()
}

// Querier runs queries, written with ? placeholders, which it binds in its
// dialect. QueryRow's Scan reports a missing row as ErrNoRows.
type Querier interface {
	Dialect() Dialect
	Query(ctx context.Context, q string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, q string, args ...any) Row
}

// Tx is a driver's write transaction: it reads and writes under the
// driver's write lock (SQLite's IMMEDIATE transaction on its one writer
// connection, PostgreSQL's advisory lock). Exec returns the rows affected.
// The rest are the driver's own pieces of a write:
//   - AppendEvents adds events to the ledger, and their usage to the sums
//     (AddUsage): a prepared statement on SQLite, one batch on PostgreSQL;
//   - BranchTaken turns a violation of the live-branch index on a write of
//     t into a *store.BranchTakenError, any other error returned as it is.
type Tx interface {
	Querier
	Exec(ctx context.Context, q string, args ...any) (int64, error)
	AppendEvents(ctx context.Context, events []task.Event) error
	BranchTaken(ctx context.Context, t task.Task, err error) error
}

// Driver is what Ops, Transitions and Sessions run on: reads outside a write transaction, and one
// write transaction a call, committed when fn returns nil and rolled back,
// with every event fn appended, when it does not.
type Driver interface {
	Reads() Querier
	Write(ctx context.Context, fn func(Tx) error) error
}

// Ops is the store.Store operations both drivers run the same way. A
// driver's Store embeds it, set to a Driver over its own connections.
type Ops struct {
	D Driver
}
