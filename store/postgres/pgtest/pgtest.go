// Package pgtest starts a throwaway PostgreSQL cluster for tests: initdb in
// a temporary directory, a server that listens on a unix socket only (no TCP
// port at all), and a fresh database per caller. PostgreSQL refuses to run as
// root, so under root (as in CI) the cluster runs as the unprivileged user
// "nobody". Everything is removed when the test that started it ends.
//
// Set ORCHESTRA_TEST_PG_URL to use an existing server instead; each caller
// then still gets a database of its own on it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running PostgreSQL server for tests.
type Cluster struct {
	// admin is the URL of the server's maintenance database.
	admin string
	n     atomic.Int64
	mu    sync.Mutex
	// srv starts the server (nil for a server the test did not start);
	// cur is the one running, nil while Stop has it down. Guarded by mu.
	srv func() (*server, error)
	cur *server
	// tcp is the server's TCP address ("127.0.0.1:PORT") when it was
	// started with TCP, else empty.
	tcp string
}

// server is one run of the postgres process.
type server struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// stop is PostgreSQL's fast shutdown (SIGINT): it ends every session and
// stops; a server that does not stop within 30 s is killed.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

// Stop stops the server as `pg_ctl stop -m fast` does: every connection is
// ended and new ones are refused until Start. Only for a cluster Start
// started itself.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv == nil {
		t.Skip("pgtest: the server of ORCHESTRA_TEST_PG_URL cannot be stopped by a test")
	}
	if c.cur != nil {
		c.cur.stop()
		c.cur = nil
	}
}

// Start starts the server again after Stop, on the same data and socket,
// and returns once it accepts connections.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil {
		return
	}
	s, err := c.srv()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	c.cur = s
}

// Restart is `pg_ctl restart -m fast`: Stop, then Start.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	c.Stop(t)
	c.Start(t)
}

// Option adjusts a cluster Start starts.
type Option func(*options)

type options struct{ statements, tcp bool }

// TCP makes the server listen on 127.0.0.1 as well as on its socket, on a
// port of its own that a restart keeps (see Cluster.TCPAddr), so a test can
// put a relay (a fault-injecting proxy) between a client and the server.
func TCP() Option { return func(o *options) { o.tcp = true } }

// TCPAddr is the server's TCP address, host:port, or "" when it was not
// started with TCP.
func (c *Cluster) TCPAddr() string { return c.tcp }

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Statements loads pg_stat_statements (PostgreSQL's contrib, part of
// Debian's postgresql package), so a benchmark can count the statements
// the engines run; see Cluster.Statements.
func Statements() Option { return func(o *options) { o.statements = true } }

// Start starts a cluster that lives until t ends, or skips t when no
// PostgreSQL server binaries are installed and the run is not CI (CI must
// install them: .ci/run does).
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	if u := os.Getenv("ORCHESTRA_TEST_PG_URL"); u != "" {
		c := &Cluster{admin: u}
		if o.statements {
			if err := c.exec(context.Background(), "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
				t.Skipf("pgtest: ORCHESTRA_TEST_PG_URL's server has no pg_stat_statements: %v", err)
			}
		}
		return c
	}
	bin, err := binDir()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: %v (CI must install postgresql: see .ci/run)", err)
		}
		t.Skipf("pgtest: %v; install postgresql to run this test", err)
	}
	dir, err := os.MkdirTemp("", "orchestra-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cred, err := unprivileged(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	// listen_addresses='' turns TCP off (unless TCP asks for 127.0.0.1): the
	// server is reachable through the socket in dir only. fsync off: a test cluster need not survive a power
	// loss, and it makes every commit much cheaper on a busy machine.
	args := []string{"-D", data, "-k", dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200"}
	c := &Cluster{}
	if o.tcp {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		args[5] = "listen_addresses=127.0.0.1"
		args = append(args, "-p", strconv.Itoa(port))
		c.tcp = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	if o.statements {
		args = append(args, "-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all")
	}
	q := url.Values{"host": {dir}, "sslmode": {"disable"}}
	if c.tcp != "" {
		_, port, _ := net.SplitHostPort(c.tcp)
		q.Set("port", port) // the socket's name carries the port
	}
	admin := (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres", RawQuery: q.Encode()}).String()
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logf.Close() })
	c.admin = admin
	c.srv = func() (*server, error) {
		srv := exec.Command(filepath.Join(bin, "postgres"), args...)
		srv.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
		srv.Stdout, srv.Stderr = logf, logf
		if err := srv.Start(); err != nil {
			return nil, fmt.Errorf("start postgres: %w", err)
		}
		s := &server{cmd: srv, exited: make(chan struct{})}
		go func() { _ = srv.Wait(); close(s.exited) }()
		if err := waitReady(t.Context(), admin, s.exited); err != nil {
			s.stop()
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			return nil, fmt.Errorf("server did not start: %w\n%s", err, log)
		}
		return s, nil
	}
	if c.cur, err = c.srv(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.cur != nil {
			c.cur.stop()
		}
	})
	if o.statements {
		if err := c.exec(t.Context(), "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	return c
}

// Statement is one normalised statement and how often it ran.
type Statement struct {
	Query string
	Calls int64
}

// ResetStatements zeroes the counts pg_stat_statements keeps (a cluster
// started with Statements).
func (c *Cluster) ResetStatements(t testing.TB) {
	t.Helper()
	if err := c.exec(context.Background(), "SELECT pg_stat_statements_reset()"); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// Statements returns every statement run since the last reset, in every
// database of the cluster, most called first.
func (c *Cluster) Statements(t testing.TB) []Statement {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT query, sum(calls)::bigint FROM pg_stat_statements GROUP BY query ORDER BY 2 DESC")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Statement, error) {
		var s Statement
		err := r.Scan(&s.Query, &s.Calls)
		return s, err
	})
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return out
}

// NewDatabase returns the URL of an empty database of the caller's own,
// dropped when t ends. It is a fresh schema, selected by the URL's
// search_path, in one database the cluster shares: creating a schema is
// cheap, while CREATE DATABASE copies a template and takes a cluster lock.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("orchestra_test_%d_%d", os.Getpid(), c.n.Add(1))
	if err := c.exec(context.Background(), "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = c.exec(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE") })
	u, err := url.Parse(c.admin)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs one statement on the maintenance database, one at a time.
func (c *Cluster) exec(ctx context.Context, sql string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn, err := pgx.Connect(ctx, c.admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// waitReady polls the server until it accepts a connection. Start-up is a
// child process becoming ready, with no signal to wait on but the socket.
func waitReady(ctx context.Context, admin string, exited <-chan struct{}) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, admin)
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-exited:
			return errors.New("postgres exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// binDir finds the newest installed PostgreSQL server binaries.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb) found")
}

// unprivileged returns the credential the cluster runs under: nil (this
// process's own) unless this process is root, when it is the user "nobody",
// who is given dir.
func unprivileged(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root and no user nobody to run postgres as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	// The parent of a temporary directory may be closed to others (a
	// private TMPDIR); postgres must be able to reach its data directory.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}
