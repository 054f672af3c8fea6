// Package sqlite is the default store driver: one SQLite file per repository,
// opened in WAL mode so another orchestra-tui process (`correct` or `add` from
// a second terminal) can read and write it while the console runs. It uses
// the pure-Go modernc.org/sqlite, so the binary needs no cgo.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// applicationID marks a SQLite file as an orchestra store ("ORCH" in ASCII),
// so Open can tell its own file from any other SQLite database.
const applicationID = 0x4f524348

// busyTimeoutMS is how long a statement waits for another process's write
// lock before failing. Writes are short, so a few seconds is generous.
const busyTimeoutMS = 10000

// sqliteMagic is the first 16 bytes of every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// Store is a store.Store backed by one SQLite file. It is safe for concurrent
// use; several Stores, in one process or several, may share a file.
type Store struct {
	// Ops, Transitions and Sessions are the store operations shared with
	// the PostgreSQL driver, run on this Store's connections (sqlq.go).
	sqlq.Ops
	sqlq.Transitions
	sqlq.Sessions
	path string
	// w carries every write on a single connection: writers in this process
	// queue in Go instead of polling SQLite's busy handler, and each
	// transaction begins IMMEDIATE so it never fails upgrading a read lock.
	w *sql.DB
	// r serves reads; in WAL mode they never wait for the writer.
	r *sql.DB
	// insertEvent is prepared on w, since nearly every write appends events.
	insertEvent *sql.Stmt
	// wstmts and rstmts are the statements prepared on w and r (stmts.go).
	wstmts, rstmts *stmts
	// seqs are the ledger positions of this Store's own appends (seqs.go).
	seqs seqCache
	// changes wakes this process's listeners after each commit.
	changes store.Changes
	// timeout bounds a write whose context has no deadline of its own.
	timeout time.Duration
}

// Option adjusts Open.
type Option func(*Store)

// CallTimeout bounds every write whose context has no deadline of its own
// (its wait for the writer connection included) by d instead of
// store.DefaultCallTimeout; d <= 0 keeps the default. A wait for another
// process's lock is bounded by the busy timeout, the same figure by
// default. Reads never wait in WAL mode.
func CallTimeout(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.timeout = d
		}
	}
}

var _ store.Store = (*Store)(nil)

// DefaultPath is where a repository keeps its store.
func DefaultPath(repoRoot string) string {
	return filepath.Join(repoRoot, ".orchestra", "orchestra.db")
}

// Open opens the store at path, creating the file and its directory when
// missing and migrating an older schema forward. It refuses, without
// modifying it, a file that is not an orchestra store (store.ErrForeign) or
// one written by a newer orchestra-tui (store.ErrTooNew).
func Open(path string, opts ...Option) (*Store, error) {
	s, err := open(path, len(migrations))
	if err != nil {
		return nil, err
	}
	for _, f := range opts {
		f(s)
	}
	return s, nil
}

// open opens path and migrates it to schema version target; tests use a
// target below the latest to build old databases.
func open(path string, target int) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	h, err := inspect(abs)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open store %s: create its directory: %w", abs, err)
	}
	// A state directory made by an older version (or another component)
	// with a wider mode is narrowed: it holds the store and the recordings.
	if filepath.Base(filepath.Dir(abs)) == task.StateDir {
		_ = os.Chmod(filepath.Dir(abs), 0o700)
	}
	// The store holds everything the agents printed and every correction:
	// private to its owner. SQLite gives the -wal and -shm files the mode
	// of the database file, so creating it 0600 covers all three.
	if f, err := os.OpenFile(abs, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	}
	w, err := sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	// A store already at the schema needs no migration, and no write
	// transaction to find that out: a CLI command that only reads (status)
	// never waits for an engine's write.
	if h.appID != applicationID || h.version != target {
		if err := migrateTo(context.Background(), w, abs, target); err != nil {
			_ = w.Close()
			return nil, err
		}
	}
	r, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	r.SetMaxOpenConns(4)
	ins, err := w.Prepare(sqlq.InsertEvent)
	if err != nil {
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	s := &Store{path: abs, w: w, r: r, insertEvent: ins, wstmts: newStmts(w), rstmts: newStmts(r), timeout: store.DefaultCallTimeout}
	d := driver{s}
	s.Ops, s.Transitions, s.Sessions = sqlq.Ops{D: d}, sqlq.Transitions{D: d}, sqlq.Sessions{D: d}
	return s, nil
}

// dsn is the connection string for the file at abs. Every connection turns on
// WAL (persistent, a no-op once set), foreign keys (per connection) and the
// busy timeout; NORMAL sync is durable across process crashes in WAL mode and
// only risks the last commits on power loss, when no stale worker survives to
// reuse a lost token.
func dsn(abs string, writer bool) string {
	u := url.URL{Scheme: "file", Path: abs}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if writer {
		q.Set("_txlock", "immediate")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// inspectDSN is the read-only connection string inspect uses. Like every
// other connection it waits busyTimeoutMS for a lock held by another
// process (a console checkpointing its WAL, a CLI migrating the schema)
// instead of failing at once with SQLITE_BUSY.
func inspectDSN(abs string, wal bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Set("mode", "ro")
	if !wal {
		q.Set("immutable", "1")
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}
	return u.String()
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes both connection pools.
func (s *Store) Close() error {
	s.changes.Close()
	return errors.Join(s.insertEvent.Close(), s.wstmts.close(), s.rstmts.close(), s.w.Close(), s.r.Close())
}

// inspect decides, without writing to it, whether the file at abs may be
// opened as a store: missing or empty files are new stores; anything else
// must be a SQLite database that carries our application id, or an empty
// SQLite database, at a schema version this binary knows.
//
// It returns the header it read; the zero header for a new store.
func inspect(abs string) (header, error) {
	f, err := os.Open(abs)
	if errors.Is(err, os.ErrNotExist) {
		return header{}, nil
	}
	if err != nil {
		return header{}, fmt.Errorf("open store %s: %w", abs, err)
	}
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	_ = f.Close()
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return header{}, nil // an empty file is an empty SQLite database
	case n < len(head) || !bytes.Equal(head, sqliteMagic):
		return header{}, fmt.Errorf("%s is not a SQLite database, so not an orchestra store; move it aside or pass another path: %w", abs, store.ErrForeign)
	}

	// Without a WAL file everything is in the main file, and immutable=1
	// reads it taking no locks and creating no -shm or -wal beside it. With
	// one, another process may be writing, and a read-only connection reads
	// the header through the WAL, which the bytes on disk may not show yet.
	fi, err := os.Stat(abs + "-wal")
	db, err := sql.Open("sqlite", inspectDSN(abs, err == nil && fi.Size() > 0))
	if err != nil {
		return header{}, fmt.Errorf("open store %s: %w", abs, err)
	}
	defer db.Close()
	h, err := readHeader(context.Background(), db)
	if err != nil {
		if isNotADB(err) {
			return h, fmt.Errorf("%s is not a readable SQLite database, so not an orchestra store: %w: %v", abs, store.ErrForeign, err)
		}
		return h, fmt.Errorf("open store %s: read its header: %w", abs, err)
	}
	return h, h.check(abs)
}

// header is what Open needs to know about an existing database.
type header struct {
	appID   int64
	version int
	tables  int
}

// querier is what both *sql.DB and *sql.Tx offer for reading.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readHeader(ctx context.Context, q querier) (header, error) {
	var h header
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&h.appID); err != nil {
		return h, err
	}
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&h.version); err != nil {
		return h, err
	}
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'").Scan(&h.tables)
	return h, err
}

// check refuses a database that is someone else's or too new for us.
func (h header) check(abs string) error {
	switch {
	case h.appID == applicationID:
	case h.appID != 0:
		return fmt.Errorf("%s is a SQLite database of another application (application_id %#x), not an orchestra store: %w", abs, h.appID, store.ErrForeign)
	case h.tables > 0:
		return fmt.Errorf("%s is a SQLite database with tables but no orchestra application id, so not an orchestra store: %w", abs, store.ErrForeign)
	default:
		return nil // an empty database: whatever its user_version, we start at 0
	}
	if h.version > len(migrations) {
		return fmt.Errorf("%s has schema version %d but this orchestra-tui knows only up to %d; upgrade orchestra-tui: %w", abs, h.version, len(migrations), store.ErrTooNew)
	}
	return nil
}

// isNotADB reports whether err is SQLite saying the file is not a database.
func isNotADB(err error) bool {
	var e *msqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	code := e.Code() & 0xff
	return code == sqlite3.SQLITE_NOTADB || code == sqlite3.SQLITE_CORRUPT
}
