package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxStmts bounds each pool's cache of prepared statements. The store's
// statements are a few dozen fixed texts; a list query's text varies with
// the list's length (IN (?, ?, ...)), so a long-lived engine could
// otherwise keep preparing new ones. Texts met once the cache is full run
// unprepared, as every statement did before.
const maxStmts = 256

// stmts caches the statements run on one pool, prepared once by their
// text. SQLite compiles each statement it is handed; the shared queries
// (store/sqlq) pass their SQL as text, so without the cache every call
// compiled it again (the largest cost of a correction's two writes). A
// statement of the writer's pool is bound to a transaction with
// Tx.StmtContext, which reuses it on the writer's only connection.
//
// The writer's statements cannot be prepared when first met: that is
// inside a transaction, which holds the pool's only connection. They are
// noted (later) and prepared before the next transaction begins
// (prepareLater), so a text runs unprepared once.
type stmts struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
	// later holds the texts met in a transaction and not yet prepared.
	later map[string]bool
}

func newStmts(db *sql.DB) *stmts {
	return &stmts{db: db, m: map[string]*sql.Stmt{}, later: map[string]bool{}}
}

// get returns q prepared, or nil when it is not cached and cannot be:
// the cache is full, or the prepare failed (the caller then runs q as
// text, which reports the error the way it always did).
func (c *stmts) get(ctx context.Context, q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	st, ok := c.m[q]
	full := c.m == nil || len(c.m) >= maxStmts
	c.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, dup := c.m[q]; dup {
		_ = st.Close()
		return prev
	}
	if c.m == nil || len(c.m) >= maxStmts {
		_ = st.Close()
		return nil
	}
	c.m[q] = st
	return st
}

// cached returns q prepared when it is, else nil, and notes q for
// prepareLater: the caller holds a connection the prepare would wait for.
func (c *stmts) cached(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if c.m != nil && len(c.m)+len(c.later) < maxStmts {
		c.later[q] = true
	}
	return nil
}

// prepareLater prepares the texts cached noted. The writer calls it
// before it begins a transaction. It holds no lock while it prepares: the
// prepare waits for the writer's connection, which a transaction may hold
// while it calls cached.
func (c *stmts) prepareLater(ctx context.Context) {
	c.mu.Lock()
	if len(c.later) == 0 {
		c.mu.Unlock()
		return
	}
	var qs []string
	for q := range c.later {
		qs = append(qs, q)
	}
	clear(c.later)
	c.mu.Unlock()
	for _, q := range qs {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue // it runs as text, and reports its error there
		}
		c.mu.Lock()
		if _, dup := c.m[q]; dup || c.m == nil || len(c.m) >= maxStmts {
			_ = st.Close() // prepared meanwhile, or the store closed
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

// close closes every cached statement; get prepares none afterwards.
func (c *stmts) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m = nil
	return errors.Join(errs...)
}
