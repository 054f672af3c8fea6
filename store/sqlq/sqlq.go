// Package sqlq is the query code the SQL drivers (store/sqlite,
// store/postgres) share: each query and its scanning written once, over the
// two small interfaces below, with what differs between the dialects kept
// in one place (Dialect). A driver adapts its connection, pool or
// transaction to Reader or Writer and calls these functions; what only one
// database can do (SQLite's pragmas, PostgreSQL's advisory locks, NOTIFY)
// stays in its driver.
package sqlq

import (
	"context"
	"strconv"
	"strings"
)

// Dialect is what differs between the SQL the drivers speak.
type Dialect int

const (
	// SQLite writes placeholders as ?.
	SQLite Dialect = iota
	// Postgres numbers them: $1, $2, ...
	Postgres
)

// Bind returns q, written with ? placeholders, in d's placeholders. The
// shared queries hold no ? but their placeholders (no string literal, no
// JSON operator), which TestBind keeps true.
func (d Dialect) Bind(q string) string {
	if d != Postgres {
		return q
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
	return b.String()
}

// Rows is a query's result as both drivers' rows offer it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Reader runs a query outside a write transaction.
type Reader interface {
	Dialect() Dialect
	Query(ctx context.Context, q string, args ...any) (Rows, error)
}

// Writer runs a statement inside a driver's write transaction.
type Writer interface {
	Dialect() Dialect
	Exec(ctx context.Context, q string, args ...any) error
}
