package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/repo"
)

// engineCmd is `orchestra-tui engine`: start the repository's engine in the
// background, or run it in the foreground (systemd, launchd, containers).
func engineCmd(args []string, stdout, stderr io.Writer) int {
	// Taken first: the descriptor must not reach anything this starts.
	ready := engine.TakeReady()
	fs := newFlags("engine", "orchestra-tui engine [--foreground] [-C DIR]   (run the repository's engine: coordinator, leases, verify gate, agents)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	fg := fs.Bool("foreground", false, "run in this process and log to stderr, for a service manager; stop with SIGTERM")
	if err := fs.Parse(args); err != nil {
		ready(err)
		return parseStatus(err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "engine", "unexpected argument %q", fs.Arg(0))
	}
	r, err := repo.Open(*dir)
	if err != nil {
		ready(err)
		return fail(stderr, err)
	}
	if !*fg {
		self, err := os.Executable()
		if err != nil {
			return fail(stderr, err)
		}
		pid, err := engine.Spawn(context.Background(), self, r.Root)
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "engine started (pid %d); log: %s\nattach with `orchestra-tui`, stop it and every agent with `orchestra-tui stop`\n",
			pid, relTo(r.Root, engine.PathsFor(r.Root).Log))
		return 0
	}
	// The terminal closing must not stop the agents; SIGINT and SIGTERM
	// stop them politely, requeueing their tasks without charging an
	// attempt.
	signal.Ignore(syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := engine.Start(ctx, engine.Params{Dir: r.Root, Version: version()})
	ready(err)
	if err != nil {
		return fail(stderr, err)
	}
	<-e.Done()
	if err := e.Err(); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// stopCmd is `orchestra-tui stop`: stop the engine and every agent.
func stopCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("stop", "orchestra-tui stop [-C DIR]   (stop the repository's engine and every agent; their tasks requeue without losing an attempt)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := dialEngine(ctx, r.Root, false, "cli")
	if errors.Is(err, errNoEngine) {
		fmt.Fprintln(stdout, "no engine runs on this repository; nothing to stop")
		return 0
	}
	if err != nil {
		return fail(stderr, err)
	}
	defer cl.Close()
	pid := cl.Pid()
	lines, err := cl.Stop(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintf(stdout, "engine (pid %d) stopped\n", pid)
	return 0
}

// errNoEngine means no engine answers on the repository's socket.
var errNoEngine = errors.New("no engine runs on this repository")

// dialEngine connects to the repository's engine, starting one in the
// background first when start is set and none answers.
func dialEngine(ctx context.Context, root string, start bool, kind string) (*engine.Client, error) {
	p := engine.PathsFor(root)
	o := engine.Options{Watch: kind == "console", Version: version(), Kind: kind}
	cl, err := engine.Dial(ctx, p.Socket, o)
	if err == nil {
		return cl, nil
	}
	var ve *engine.VersionError
	if errors.As(err, &ve) || !isNotServing(err) {
		return nil, err
	}
	if !start {
		return nil, errNoEngine
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if _, err := engine.Spawn(ctx, self, root); err != nil {
		var le *engine.LockedError
		if !errors.As(err, &le) {
			return nil, err
		}
		// Another console started it a moment earlier: attach to that
		// one once it serves.
		return dialWait(ctx, p.Socket, o)
	}
	return engine.Dial(ctx, p.Socket, o)
}

// engineStartWait bounds how long a console waits for an engine another
// console is starting.
const engineStartWait = 30 * time.Second

// dialWait dials until the engine answers, for an engine that is starting.
func dialWait(ctx context.Context, socket string, o engine.Options) (*engine.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, engineStartWait)
	defer cancel()
	retry := time.NewTicker(50 * time.Millisecond)
	defer retry.Stop()
	for {
		cl, err := engine.Dial(ctx, socket, o)
		if err == nil || !isNotServing(err) {
			return cl, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("an engine is starting on this repository but did not answer within %s", engineStartWait)
		case <-retry.C:
		}
	}
}

// isNotServing reports whether a dial failed because nothing listens.
func isNotServing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// engineDo sends a command to the running engine; errNoEngine when none
// runs.
func engineDo(ctx context.Context, root string, cmd coord.Command) (coord.Result, error) {
	cl, err := dialEngine(ctx, root, false, "cli")
	if err != nil {
		return coord.Result{}, err
	}
	defer cl.Close()
	return cl.Do(ctx, cmd)
}

func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}

// applyOffline applies cmd while no engine runs, through the coordinator's
// own command code, holding the engine lock so no engine starts meanwhile
// and misses the change. A held lock means an engine is starting (the
// command goes to it once it answers) or, for a moment, that a process
// forked elsewhere still shares the lock's descriptor: both are retried
// until one of them works.
func applyOffline(ctx context.Context, root string, cmd coord.Command) (coord.Result, error) {
	p := engine.PathsFor(root)
	if err := os.MkdirAll(filepath.Dir(p.Lock), 0o700); err != nil {
		return coord.Result{}, err
	}
	retry := time.NewTicker(50 * time.Millisecond)
	defer retry.Stop()
	for {
		lock, err := engine.Acquire(p.Lock)
		if err == nil {
			defer lock.Release()
			break
		}
		var le *engine.LockedError
		if !errors.As(err, &le) {
			return coord.Result{}, err
		}
		res, err := engineDo(ctx, root, cmd)
		if !errors.Is(err, errNoEngine) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return coord.Result{}, fmt.Errorf("%w; it did not answer in time", le)
		case <-retry.C:
		}
	}
	o, err := coord.Open(coord.OpenParams{Dir: root})
	if err != nil {
		return coord.Result{}, err
	}
	defer o.Close()
	return o.ApplyOffline(ctx, cmd)
}
