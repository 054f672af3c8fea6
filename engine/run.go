package engine

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Params say how to start an engine.
type Params struct {
	// Dir is any directory inside the repository.
	Dir string
	// Version is the binary's version, for the handshake.
	Version string
	// Open, when set, opens the coordinator (tests and the demo adjust
	// it); nil opens the repository's with its configuration.
	Open func(dir string) (*coord.Opened, error)
	// Log receives the engine's log lines; nil means stderr.
	Log *log.Logger
}

// Engine is a running engine: the coordinator, its lock and its socket.
// The background engine and the in-process console run the same one.
type Engine struct {
	*coord.Opened
	Paths  Paths
	lock   *Lock
	ln     net.Listener
	srv    *Server
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	logf   func(string, ...any)
	// version is the binary's, recorded with every heartbeat.
	version string
	// keeping is set when a client's stop leaves the agents running.
	keeping atomic.Bool
	// relay serves the panes of sessions other engines hold, on a shared
	// store; nil otherwise.
	relay *relay
}

// Serve takes the repository's engine lock and serves o on the engine
// socket, for a coordinator that something else runs (`run --headless`):
// CLI commands reach it, and no second engine starts beside it. The
// returned function stops serving and releases the lock.
func Serve(o *coord.Opened, version string) (func(), error) {
	paths := PathsFor(o.Repo.Root)
	if err := os.MkdirAll(filepath.Dir(paths.Lock), 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	lock, err := acquireForEngine(paths)
	if err != nil {
		return nil, err
	}
	ln, err := Listen(paths)
	if err != nil {
		lock.Release()
		return nil, err
	}
	srv := &Server{Engine: o, Store: o.Store, Root: o.Repo.Root, Version: version}
	go func() { _ = srv.Serve(ln) }()
	hbCtx, hbStop := context.WithCancel(context.Background())
	hbDone := heartbeat(hbCtx, o, version, nil, nil)
	return func() {
		hbStop()
		<-hbDone
		ln.Close()
		srv.Close()
		_ = os.Remove(paths.Socket)
		lock.Release()
	}, nil
}

// Start takes the repository's engine lock, opens the coordinator, serves
// the socket and runs the coordinator until ctx ends or a client asks it
// to stop. A second engine on the same repository is refused with the
// first one's pid.
func Start(ctx context.Context, p Params) (*Engine, error) {
	r, err := repo.Open(p.Dir)
	if err != nil {
		return nil, err
	}
	paths := PathsFor(r.Root)
	if err := os.MkdirAll(filepath.Dir(paths.Lock), 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	lock, err := acquireForEngine(paths)
	if err != nil {
		return nil, err
	}
	// Loading a big store allocates much that stays (every task, verdict
	// and usage sum): with the default GOGC a fresh process collects again
	// and again while its heap grows, a third of the load of 10,000 tasks.
	// The collector paces at 400% until the store is loaded, then as
	// configured.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	open := p.Open
	if open == nil {
		open = func(dir string) (*coord.Opened, error) { return coord.Open(coord.OpenParams{Dir: dir}) }
	}
	o, err := open(r.Root)
	if err != nil {
		lock.Release()
		return nil, err
	}
	ln, err := Listen(paths)
	if err != nil {
		o.Close()
		lock.Release()
		return nil, err
	}
	lg := p.Log
	if lg == nil {
		lg = log.New(os.Stderr, "engine: ", log.LstdFlags)
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &Engine{Opened: o, Paths: paths, lock: lock, ln: ln, cancel: cancel, done: make(chan struct{}), logf: lg.Printf, version: p.Version}
	var served coord.Engine = o
	if sh, ok := o.Store.(interface{ Shared() bool }); ok && sh.Shared() {
		e.relay = newRelay(o, p.Version, lg.Printf)
		served = e.relay
	}
	// An engine whose consoles see nothing change for a second hands
	// back its free heap and the pages of the binary its work touched
	// (the store's code above all), as a host and a console do: the
	// work that wakes it faults back what it runs (bench/memory.sh).
	active, stopTrim := host.TrimWhenQuiet(engineTrimQuiet, host.Lighten)
	e.srv = &Server{Engine: served, Store: o.Store, Root: r.Root, Version: p.Version, Stop: e.stopFor, KeepAgents: e.keepAgents, Logf: lg.Printf, Active: active}
	go func() { <-e.done; stopTrim() }()
	go func() { _ = e.srv.Serve(ln) }()
	go e.run(ctx)
	// A console's first frame is the history: return once the coordinator
	// has loaded the store, or has failed to.
	select {
	case <-o.Loaded():
	case <-e.done:
		if e.err != nil {
			return nil, e.err
		}
		return nil, errors.New("the engine stopped while starting")
	}
	lg.Printf("pid %d serving %s (protocol %d, %s)", os.Getpid(), paths.Socket, ProtocolVersion, p.Version)
	lg.Printf("sessions' process trees are stopped through %s", session.TreeMechanism())
	if id, upgraded := o.FleetKey(); upgraded > 0 {
		lg.Printf("created the fleet key %s and signed the %d tasks from before task signing with it (upgrade); copy the key to the fleet's other machines", id, upgraded)
	} else {
		lg.Printf("tasks are signed and checked with the fleet key %s", id)
	}
	// The store is loaded: the code of the binary's package inits, which
	// an engine runs once, goes back to the page cache (host.DropCode).
	host.DropCode()
	return e, nil
}

// engineTrimQuiet is how long an engine's clients must see nothing change
// before it trims.
const engineTrimQuiet = time.Second

func (e *Engine) run(ctx context.Context) {
	hbCtx, hbStop := context.WithCancel(context.WithoutCancel(ctx))
	hbDone := heartbeat(hbCtx, e.Opened, e.version, e.keeping.Load, e.logf)
	unlog := logStore(e.Opened, e.logf)
	defer unlog()
	relayCtx, relayStop := context.WithCancel(ctx)
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		if e.relay != nil {
			e.relay.run(relayCtx)
		}
	}()
	err := e.Opened.Run(ctx)
	// The relay reads the store: it ends before the store closes.
	relayStop()
	<-relayDone
	// The last heartbeat records the clean stop; the store closes after it.
	hbStop()
	<-hbDone
	e.ln.Close()
	e.srv.Close()
	_ = os.Remove(e.Paths.Socket)
	if cerr := e.Opened.Close(); err == nil {
		err = cerr
	}
	e.lock.Release()
	if err != nil {
		e.logf("stopped: %v", err)
	} else {
		e.logf("stopped")
	}
	e.err = err
	close(e.done)
}

// Done is closed once the engine has stopped every agent, released its
// lock and closed its store.
func (e *Engine) Done() <-chan struct{} { return e.done }

// Err is why the engine stopped; read it after Done.
func (e *Engine) Err() error { return e.err }

// Stop stops every agent and the engine, and waits for it.
func (e *Engine) Stop() error {
	e.cancel()
	<-e.done
	return e.err
}

// stopFor serves a client's stop: it names each live session, stops the
// engine, and reports how each session ended.
func (e *Engine) stopFor(ctx context.Context) []string {
	snap := e.Opened.Snapshot()
	type live struct {
		id      task.ID
		title   string
		session string
	}
	var ls []live
	for _, tv := range snap.Tasks {
		if tv.SessionID != "" {
			ls = append(ls, live{tv.Task.ID, tv.Task.Title, tv.SessionID})
		}
	}
	e.logf("stop requested; stopping %d sessions", len(ls))
	e.cancel()
	<-e.Opened.Done()
	var lines []string
	for _, l := range ls {
		line := fmt.Sprintf("task %s (%s): session %s stopped", l.id.Short(), l.title, shortID(l.session))
		if s, err := e.Opened.Store.SessionGet(context.WithoutCancel(ctx), l.session); err == nil {
			line = fmt.Sprintf("task %s (%s): session %s %s, exit %d", l.id.Short(), l.title, shortID(l.session), s.Status, s.ExitCode)
			if s.Status == store.SessionConfirmed || s.Status == store.SessionLaunching {
				if e.keeping.Load() {
					line = fmt.Sprintf("task %s (%s): session %s left running in its session host; the next engine takes it up", l.id.Short(), l.title, shortID(l.session))
				} else {
					line += " (still marked live)"
				}
			}
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		lines = append(lines, "no session was running")
	}
	return lines
}

// keepAgents makes the coming stop leave the agents in session hosts
// running.
func (e *Engine) keepAgents() {
	e.keeping.Store(true)
	e.Opened.KeepAgentsOnStop()
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}

// logStore writes the store's failures and recoveries into the engine's
// log, where an operator looks when a fleet stops placing work, until the
// returned func is called.
func logStore(o *coord.Opened, logf func(string, ...any)) (stop func()) {
	ch, unsub := o.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := range ch {
			if ev := n.Event; ev != nil && (ev.Reason == task.ReasonStoreFailed || ev.Kind == task.EvStoreRecovered) {
				logf("store: %s", ev.Text)
			}
		}
	}()
	return func() { unsub(); <-done }
}
