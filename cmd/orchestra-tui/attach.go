package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/repo"
)

// SSHCommandEnv names the variable that replaces "ssh" for --remote, as
// GIT_SSH_COMMAND does for git: the program and its options, split at
// spaces (e.g. "ssh -F /path/to/config").
const SSHCommandEnv = "ORCHESTRA_SSH_COMMAND"

// attachCmd is the remote end of `orchestra-tui --remote HOST`: it carries
// the engine protocol between its stdin/stdout and the repository's engine
// socket, starting the engine first when none runs. SSH authenticates the
// peer; nothing here listens on the network.
func attachCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("attach", "orchestra-tui attach --stdio [-C DIR]   (run by `orchestra-tui --remote HOST` over ssh)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	stdio := fs.Bool("stdio", false, "carry the engine protocol over standard input and output")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if !*stdio || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: orchestra-tui attach --stdio [-C DIR]")
		return 2
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	ctx := context.Background()
	// Dialling through the client starts the engine when none runs and
	// proves it answers; the bridge then opens a raw connection of its own.
	cl, err := dialEngine(ctx, r.Root, true, "cli")
	if err != nil {
		return fail(stderr, err)
	}
	_ = cl.Close()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", engine.PathsFor(r.Root).Socket)
	if err != nil {
		return fail(stderr, fmt.Errorf("connect to the engine: %w", err))
	}
	if err := bridge(nc, stdin, stdout); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// bridge copies between the connection and stdio until either side ends,
// then closes the connection.
func bridge(nc net.Conn, stdin io.Reader, stdout io.Writer) error {
	defer nc.Close()
	errc := make(chan error, 2)
	go func() {
		_, err := io.Copy(nc, stdin)
		errc <- err
	}()
	go func() {
		_, err := io.Copy(stdout, nc)
		errc <- err
	}()
	// Either side ending ends the bridge: the console quit (stdin closed)
	// or the engine went away (the socket closed).
	err := <-errc
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// remoteTarget splits HOST[:REPO]; REPO defaults to the remote login
// directory.
func remoteTarget(s string) (host, dir string) {
	host, dir, ok := strings.Cut(s, ":")
	if !ok || dir == "" {
		dir = "."
	}
	return host, dir
}

// sshConn is the engine protocol carried by an ssh child process.
type sshConn struct {
	io.Reader
	io.WriteCloser
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	once   sync.Once
	waited chan struct{}
	err    error
}

// dialRemote runs `ssh HOST BIN attach --stdio -C REPO` and returns its
// standard input and output as one connection.
func dialRemote(target, bin string) (*sshConn, error) {
	host, dir := remoteTarget(target)
	if host == "" || strings.HasPrefix(host, "-") {
		return nil, fmt.Errorf("--remote %q: want HOST or HOST:REPO", target)
	}
	ssh := []string{"ssh"}
	if v := strings.Fields(os.Getenv(SSHCommandEnv)); len(v) > 0 {
		ssh = v
	}
	// ssh joins the remote words into one shell command line: quote them.
	remote := strings.Join([]string{shellQuote(bin), "attach", "--stdio", "-C", shellQuote(dir)}, " ")
	args := append(ssh[1:], "-T", "-o", "BatchMode=yes", "--", host, remote)
	cmd := exec.Command(ssh[0], args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &sshConn{Reader: out, WriteCloser: in, cmd: cmd, stderr: &bytes.Buffer{}, waited: make(chan struct{})}
	// ssh's own messages must not scribble over the console: they are kept
	// and shown when the connection fails.
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--remote: start %s: %w", ssh[0], err)
	}
	go func() { c.err = cmd.Wait(); close(c.waited) }()
	return c, nil
}

// Close ends the ssh process.
func (c *sshConn) Close() error {
	c.once.Do(func() {
		_ = c.WriteCloser.Close()
		select {
		case <-c.waited:
		default:
			_ = c.cmd.Process.Kill()
		}
	})
	return nil
}

// explain adds what ssh said to err.
func (c *sshConn) explain(err error) error {
	c.Close()
	<-c.waited
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return fmt.Errorf("%w\nssh: %s", err, msg)
	}
	return err
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
