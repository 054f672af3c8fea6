package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/repo"
)

// attachCmd is the remote end of `orchestra-tui --remote HOST`: it carries
// the engine protocol between its stdin/stdout and the repository's engine
// socket, starting the engine first when none runs. SSH authenticates the
// peer; nothing here listens on the network.
func attachCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("attach", "orchestra-tui attach --stdio [--no-start] [-C DIR]   (run by `orchestra-tui --remote HOST` over ssh)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	stdio := fs.Bool("stdio", false, "carry the engine protocol over standard input and output")
	noStart := fs.Bool("no-start", false, "only attach to an engine that runs; never start one (another engine drawing this one's panes)")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if !*stdio || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: orchestra-tui attach --stdio [--no-start] [-C DIR]")
		return 2
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	ctx := context.Background()
	// Dialling through the client starts the engine when none runs and
	// proves it answers; the bridge then opens a raw connection of its own.
	cl, err := dialEngine(ctx, r.Root, !*noStart, "cli")
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
