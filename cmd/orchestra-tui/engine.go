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
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/sched"
)

// engineCmd is `orchestra-tui engine`: start the repository's engine in the
// background, or run it in the foreground (systemd, launchd, containers).
func engineCmd(args []string, stdout, stderr io.Writer) int {
	// Taken first: the descriptor must not reach anything this starts.
	ready := engine.TakeReady()
	fs := newFlags("engine", "orchestra-tui engine [--foreground] [-C DIR]   (run the repository's engine: coordinator, leases, verify gate, agents)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	fg := fs.Bool("foreground", false, "run in this process and log to stderr, for a service manager; stop with SIGTERM")
	hosts := fs.Bool("hosts", true, "run each agent in a session host of its own, which outlives the engine (a restarted engine re-adopts it); --hosts=false keeps agents inside the engine")
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
		var extra []string
		if !*hosts {
			extra = append(extra, "--hosts=false")
		}
		pid, err := engine.Spawn(context.Background(), self, r.Root, extra...)
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
	// Caught and dropped rather than ignored, so the agents it starts do
	// not inherit an ignored SIGHUP across exec.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	// Keys typed in consoles pass through here on their way to a host.
	_ = sched.ShortSlice()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if anchor := host.AnchorGone(); anchor != nil {
		// A test's engine ends with its test binary, as on SIGTERM.
		go func() {
			select {
			case <-anchor:
				stop()
			case <-ctx.Done():
			}
		}()
	}
	p := engine.Params{Dir: r.Root, Version: version()}
	if *hosts {
		self, err := os.Executable()
		if err != nil {
			ready(err)
			return fail(stderr, err)
		}
		p.Open = engine.OpenWithHosts(self, version())
	}
	e, err := engine.Start(ctx, p)
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
	fs := newFlags("stop", "orchestra-tui stop [--keep-agents] [-C DIR]   (stop the repository's engine and every agent; their tasks requeue without losing an attempt)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	keep := fs.Bool("keep-agents", false, "stop only the engine: agents in session hosts keep running, and the next engine (a new binary, say) takes them up")
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
	if errors.Is(err, errNoEngine) && *keep {
		fmt.Fprintln(stdout, "no engine runs on this repository; nothing to stop")
		return 0
	}
	if errors.Is(err, errNoEngine) {
		// Session hosts an engine left behind (it was killed and not
		// restarted) are stopped all the same, with their agents.
		lines := host.StopAll(ctx, r.Root, version(), hostStopGrace, nil)
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
		if len(lines) == 0 {
			fmt.Fprintln(stdout, "no engine runs on this repository; nothing to stop")
		} else {
			fmt.Fprintln(stdout, "no engine was running")
		}
		return 0
	}
	var hung *engine.HungError
	if errors.As(err, &hung) {
		return stopHung(ctx, r.Root, hung, stdout, stderr)
	}
	if err != nil {
		return fail(stderr, err)
	}
	defer cl.Close()
	pid := cl.Pid()
	if *keep {
		lines, err := cl.StopKeepingAgents(ctx)
		if err != nil {
			return fail(stderr, err)
		}
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
		fmt.Fprintf(stdout, "engine (pid %d) stopped; its agents keep running, and the next engine takes them up\n", pid)
		return 0
	}
	lines, err := cl.Stop(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	// A host the engine did not hold (left by an engine before it) goes too.
	lines = append(lines, host.StopAll(ctx, r.Root, version(), hostStopGrace, nil)...)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintf(stdout, "engine (pid %d) stopped\n", pid)
	return 0
}

// hungStopGrace is how long an engine that does not answer gets between
// SIGTERM and SIGKILL when `stop` ends it.
const hungStopGrace = 2 * time.Second

// stopHung ends an engine that holds the lock and does not answer (stopped
// with SIGSTOP, say): it cannot be asked to stop, so it is signalled. Its
// agents are left running in their session hosts, as a killed engine's
// are, and the next engine takes them up.
func stopHung(ctx context.Context, root string, hung *engine.HungError, stdout, stderr io.Writer) int {
	how := "did not answer"
	if hung.Stopped {
		how = "was stopped (SIGSTOP) and could not answer"
	}
	if err := engine.EndHung(ctx, engine.PathsFor(root), hung.Pid, hungStopGrace); err != nil {
		return fail(stderr, fmt.Errorf("the engine (pid %d) %s: %w", hung.Pid, how, err))
	}
	fmt.Fprintf(stdout, "engine (pid %d) %s: ended it (SIGTERM, then SIGKILL); its agents keep running in their session hosts and the next engine takes them up (`orchestra-tui stop` once more stops them)\n", hung.Pid, how)
	return 0
}

// hostStopGrace is how long an agent of a session host gets between
// SIGTERM and SIGKILL when `stop` finds its host with no engine.
const hostStopGrace = 2 * time.Second

// errNoEngine means no engine answers on the repository's socket.
var errNoEngine = errors.New("no engine runs on this repository")

// dialEngine connects to the repository's engine, starting one in the
// background first when start is set and none answers.
func dialEngine(ctx context.Context, root string, start bool, kind string) (*engine.Client, error) {
	p := engine.PathsFor(root)
	o := engine.Options{Watch: kind == "console", Version: version(), Kind: kind}
	cl, err := dialSettled(ctx, p, o)
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
	return startAndDial(ctx, p, o, func() error {
		_, err := engine.Spawn(ctx, self, root)
		return err
	})
}

// engineStartWait bounds how long a console waits for an engine another
// console is starting.
const engineStartWait = 30 * time.Second

// errLockFreed is dialWait's answer when the engine lock it waited behind
// was given up and nothing serves.
var errLockFreed = errors.New("the engine lock was given up and no engine serves")

// startAndDial starts an engine with spawn and dials it. When another
// process holds the engine lock, it waits for the engine that holds it to
// answer (another console started it a moment earlier). A lock given up
// with nothing serving was held by no engine: an engine killed while it
// was starting a process leaves the lock and its socket in that child
// until the child's exec, so the engine started just then found both
// taken. Then it starts one again.
func startAndDial(ctx context.Context, p engine.Paths, o engine.Options, spawn func() error) (*engine.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, engineStartWait)
	defer cancel()
	for {
		err := spawn()
		if err == nil {
			return engine.Dial(ctx, p.Socket, o)
		}
		var le *engine.LockedError
		if !errors.As(err, &le) {
			return nil, err
		}
		cl, err := dialWait(ctx, p, o)
		if !errors.Is(err, errLockFreed) {
			return cl, err
		}
	}
}

// dialWait dials until the engine answers, for an engine that is starting;
// errLockFreed when nothing serves and nothing holds the lock any more.
func dialWait(ctx context.Context, p engine.Paths, o engine.Options) (*engine.Client, error) {
	retry := time.NewTicker(50 * time.Millisecond)
	defer retry.Stop()
	for {
		cl, err := engine.DialAnswering(ctx, p, o)
		if err == nil || !isNotServing(err) && !isGone(err) {
			return cl, err
		}
		if isNotServing(err) && !engine.Held(p.Lock) {
			return nil, errLockFreed
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("an engine is starting on this repository but did not answer within %s", engineStartWait)
		case <-retry.C:
		}
	}
}

// goneWait bounds how long a command waits out a socket whose engine is
// gone but which still takes connections (see isGone).
const goneWait = 5 * time.Second

// dialSettled dials the engine, waiting out a socket that a killed engine
// left listening for a moment: it returns a client, or the error of a dial
// that is not isGone (nothing listens, the engine refused, a version
// mismatch, an engine stopped with SIGSTOP: *engine.HungError), or the
// last isGone error after goneWait.
func dialSettled(ctx context.Context, p engine.Paths, o engine.Options) (*engine.Client, error) {
	cl, err := engine.DialAnswering(ctx, p, o)
	if err == nil || !isGone(err) {
		return cl, err
	}
	wctx, cancel := context.WithTimeout(ctx, goneWait)
	defer cancel()
	retry := time.NewTicker(20 * time.Millisecond)
	defer retry.Stop()
	for {
		select {
		case <-wctx.Done():
			return nil, err
		case <-retry.C:
		}
		cl, err = engine.DialAnswering(ctx, p, o)
		if err == nil || !isGone(err) {
			return cl, err
		}
	}
}

// isGone reports whether a dial reached the socket but the handshake found
// nobody there: the connection was reset or closed unanswered. An engine
// killed while it was starting a process (a session host, git, a gate)
// leaves its listening socket open in that child until the child's exec
// (between fork and exec a child holds a copy of every descriptor,
// close-on-exec or not), which under load can be long enough for a command
// to connect; the exec then resets the connection. A dial again is refused
// (nobody serves) or reaches the next engine.
func isGone(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
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
	// A command on a task needs the store that holds it: one that is not
	// there is said so, not made anew and empty.
	if r, err := repo.Open(root); err == nil && cmd.Kind != coord.CmdAdd {
		st, err := openExistingStore(ctx, r)
		if err != nil {
			return coord.Result{}, err
		}
		st.Close()
	}
	o, err := coord.Open(coord.OpenParams{Dir: root})
	if err != nil {
		return coord.Result{}, err
	}
	defer o.Close()
	return o.ApplyOffline(ctx, cmd)
}
