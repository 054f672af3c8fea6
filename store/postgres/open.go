// Package postgres is the store driver for PostgreSQL, for engines on
// several machines that share one queue. It runs on jackc/pgx with a
// connection pool and passes the same conformance suite (storetest) as the
// embedded SQLite driver.
//
// Every write is one transaction that first takes one transaction-scoped
// advisory lock, so writes are applied one at a time, as on SQLite: the
// guarded writes read and write under it, and ledger sequence numbers are
// committed in the order they were assigned, so a reader resuming after a
// sequence number never misses an event committed later with a smaller one.
package postgres

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
)

// writeLock is the advisory lock key every write transaction holds ("ORCH").
const writeLock = 0x4f524348

// Store is a store.Store on a PostgreSQL database. It is safe for concurrent
// use, and several Stores, in one process or on several machines, may share
// a database.
type Store struct {
	// Ops, Transitions and Sessions are the store operations shared with
	// the SQLite driver, run on this Store's pool and write transactions
	// (sqlq.go).
	sqlq.Ops
	sqlq.Transitions
	sqlq.Sessions
	// pool bounds each read by the call timeout; write bounds each write.
	pool pool
	// where names the database for messages, without its password.
	where string
	// changes wakes this process's listeners; listen feeds it from NOTIFY.
	changes store.Changes
	listen  listener
}

var _ store.Store = (*Store)(nil)

// IsURL reports whether s names a PostgreSQL database.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns the URL with its password replaced, for logs, events and
// status lines; a string that does not parse is replaced whole.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Open connects to the database at rawURL and migrates its schema forward.
// It refuses, without changing it, a database that holds tables of someone
// else (store.ErrForeign) or a schema newer than this binary knows
// (store.ErrTooNew). Every call of the Store whose context has no deadline
// of its own is bounded (CallTimeout; deadline.go).
func Open(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	where := Redact(rawURL)
	o := options{timeout: store.DefaultCallTimeout}
	for _, f := range opts {
		f(&o)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// pgx's parse errors may quote the URL, password and all.
		return nil, fmt.Errorf("open store %s: the URL does not parse as a PostgreSQL connection string", where)
	}
	configure(cfg, o.timeout)
	pp, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	s := &Store{pool: pool{Pool: pp, timeout: o.timeout}, where: where}
	d := driver{s}
	s.Ops, s.Transitions, s.Sessions = sqlq.Ops{D: d}, sqlq.Transitions{D: d}, sqlq.Sessions{D: d}
	if err := s.migrate(ctx, len(migrations)); err != nil {
		pp.Close()
		return nil, err
	}
	return s, nil
}

// Shared reports that other engines, on this machine or others, may write
// to the same database: a coordinator on it rereads what they write.
func (s *Store) Shared() bool { return true }

// Where names the database, password redacted.
func (s *Store) Where() string { return s.where }

// Close closes the pool.
func (s *Store) Close() error {
	s.stopListening()
	s.pool.Close()
	return nil
}

// write runs fn in one transaction holding the write lock and commits it
// when fn returns nil; any error rolls everything back, events included.
// It is bounded by the call timeout when ctx has no deadline of its own.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	ctx, cancel := store.Bound(ctx, s.pool.timeout)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store %s: begin: %w", s.where, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(writeLock)); err != nil {
		return fmt.Errorf("store %s: take the write lock: %w", s.where, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return s.holder(ctx, err)
	}
	// Delivered to every listening engine when, and only if, this commits.
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, channel); err != nil {
		return fmt.Errorf("store %s: notify: %w", s.where, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("store %s: commit: %w", s.where, err)
	}
	// Listeners of this Store hear it at once, not after the round trip.
	s.changes.Notify()
	return nil
}
