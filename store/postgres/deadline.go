package postgres

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// Every call of the Store is bounded (store.DefaultCallTimeout unless
// CallTimeout says otherwise) when its context has no deadline of its own:
// pgx reads and writes with no deadline but the context's, and a
// connection whose bytes are dropped (a partition, a proxy that stops
// forwarding) would hang the caller for good. pgx turns the context's
// deadline into the connection's (pgconn's DeadlineContextWatcherHandler)
// and closes that connection, so the pool's next call dials a fresh one.
// Writes are bounded in write, reads in pool below; both end in a plain
// error, which the coordinator treats as the store's outage.
//
// Dialling is bounded too: a connection is made in the pool's background,
// out of the caller's context, so without connect_timeout a startup that
// never gets an answer would hold one of the pool's few slots for good.
// The URL's connect_timeout is kept when it gives one; else it is the call
// timeout. And every TCP connection has keepalives and a TCP_USER_TIMEOUT
// of the call timeout, which pgx's URL does not offer (libpq's keepalives
// and tcp_user_timeout): the listening connection, which sends nothing
// while it waits, then finds a dead peer without a call to time out.

// Option adjusts Open.
type Option func(*options)

type options struct{ timeout time.Duration }

// CallTimeout bounds every call whose context has no deadline of its own
// by d instead of store.DefaultCallTimeout; d <= 0 keeps the default.
func CallTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// configure sets cfg's dialling from the call timeout, and the server's
// idle_in_transaction_session_timeout to it (unless the URL sets one): a
// write transaction holds the one write lock of every engine, and one
// whose engine froze (SIGSTOP, a stalled VM) or lost its connection in a
// way the server does not see would hold every other engine's writes
// until it came back. The server ends such a session after the call
// timeout, which no write of ours outlives.
func configure(cfg *pgxpool.Config, timeout time.Duration) {
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = timeout
	}
	cc.DialFunc = dialer(cc.ConnectTimeout, timeout)
	if _, ok := cc.RuntimeParams[idleInTx]; !ok {
		cc.RuntimeParams[idleInTx] = strconv.FormatInt(timeout.Milliseconds(), 10)
	}
}

// idleInTx is PostgreSQL's limit on a session idle inside a transaction.
const idleInTx = "idle_in_transaction_session_timeout"

// dialer dials with timeout connect, and gives a TCP connection keepalives
// and a TCP_USER_TIMEOUT of user.
func dialer(connect, user time.Duration) pgconn.DialFunc {
	d := &net.Dialer{
		Timeout:         connect,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3},
		Control: func(network, _ string, c syscall.RawConn) error {
			if !strings.HasPrefix(network, "tcp") {
				return nil
			}
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(user.Milliseconds()))
			}); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("set TCP_USER_TIMEOUT: %w", serr)
			}
			return nil
		},
	}
	return d.DialContext
}

// pool is the connection pool whose reads are bounded by timeout.
type pool struct {
	*pgxpool.Pool
	timeout time.Duration
}

// Query is pgxpool's, bounded until the rows are read or closed.
func (p pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	ctx, cancel := store.Bound(ctx, p.timeout)
	rows, err := p.Pool.Query(ctx, sql, args...)
	if err != nil {
		cancel()
		return nil, err
	}
	return boundRows{Rows: rows, cancel: cancel}, nil
}

// QueryRow is pgxpool's, bounded until the row is scanned.
func (p pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	ctx, cancel := store.Bound(ctx, p.timeout)
	return boundRow{row: p.Pool.QueryRow(ctx, sql, args...), cancel: cancel}
}

// boundRows releases its deadline once read to the end or closed.
type boundRows struct {
	pgx.Rows
	cancel context.CancelFunc
}

func (r boundRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.cancel()
	return false
}

func (r boundRows) Close() {
	r.Rows.Close()
	r.cancel()
}

// boundRow releases its deadline once scanned.
type boundRow struct {
	row    pgx.Row
	cancel context.CancelFunc
}

func (r boundRow) Scan(dest ...any) error {
	defer r.cancel()
	return r.row.Scan(dest...)
}
