package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/sched"
	"github.com/orchestra-tui/orchestra-tui/ui"
)

// console opens the operator console on the repository: attached to its
// engine (started in the background first when none runs), or with
// --in-process running the engine in this process as well.
func console(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("orchestra-tui", "orchestra-tui [flags]   (the console; `orchestra-tui help` lists the subcommands)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	noAnim := fs.Bool("no-anim", os.Getenv("ORCHESTRA_NO_ANIM") == "1", "no spinners or repainting status line (also ORCHESTRA_NO_ANIM=1)")
	leave := fs.String("leave-key", ui.DefaultLeaveFocusKey, "the key that leaves focus mode")
	record := fs.String("record", "", "write the console's screen to `FILE.cast` (asciicast v2)")
	inProcess := fs.Bool("in-process", false, "run the engine inside this console: quitting stops every agent")
	remote := fs.String("remote", "", "attach to the engine of `HOST[:REPO]` over ssh (REPO defaults to the remote login directory)")
	remoteBin := fs.String("remote-bin", "orchestra-tui", "the orchestra-tui `PROGRAM` to run on the remote machine")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if noTerminal(stdout, stderr, "use `orchestra-tui run --headless` to run the tasks without one, or `orchestra-tui status` to list them") {
		return 1
	}
	opts := consoleOptions{NoAnim: *noAnim, LeaveKey: *leave, Record: *record}
	if *remote != "" {
		if *inProcess {
			fmt.Fprintln(stderr, "orchestra-tui: --remote and --in-process exclude each other")
			return 2
		}
		return attachRemote(*remote, *remoteBin, opts, stdout, stderr)
	}
	if *inProcess {
		lg, closeLog, err := inProcessLog(*dir)
		if err != nil {
			return fail(stderr, err)
		}
		defer closeLog()
		e, err := engine.Start(context.Background(), engine.Params{Dir: *dir, Version: version(), Log: lg})
		if err != nil {
			var le *engine.LockedError
			if errors.As(err, &le) {
				return fail(stderr, fmt.Errorf("%w (without --in-process this console attaches to it)", err))
			}
			return fail(stderr, err)
		}
		code := showConsole(context.Background(), e.Opened, e.Repo.Root, opts, stdout, stderr)
		if err := e.Stop(); err != nil {
			return fail(stderr, err)
		}
		return code
	}
	return attach(*dir, opts, stdout, stderr)
}

// attach runs the console on the repository's engine. Quitting detaches:
// the engine and its agents go on.
func attach(dir string, opts consoleOptions, stdout, stderr io.Writer) int {
	r, err := repo.Open(dir)
	if err != nil {
		return fail(stderr, err)
	}
	ctx := context.Background()
	// A key typed in focus mode starts here on its way to the agent.
	_ = sched.ShortSlice()
	hints := attachHints{again: "orchestra-tui", stop: "orchestra-tui stop"}
	var restarts []time.Time
	for {
		cl, err := dialEngine(ctx, r.Root, true, "console")
		if err != nil {
			return fail(stderr, err)
		}
		code, lost := runAttached(ctx, cl, r.Root, hints, opts, stdout, stderr)
		cl.Close()
		if !lost {
			return code
		}
		// An engine that died (a crash, kill -9) is started again, as a
		// service manager would, and takes the agents up; one that keeps
		// dying is left for the operator to look at.
		now := time.Now()
		restarts = append(restarts, now)
		if len(restarts) > engineRestarts {
			restarts = restarts[1:]
			if now.Sub(restarts[0]) < engineRestartWindow {
				fmt.Fprintf(stdout, "lost the engine %d times in %s; see %s, and run `%s` to start it again\n",
					len(restarts), engineRestartWindow, relTo(r.Root, engine.PathsFor(r.Root).Log), hints.again)
				return code
			}
		}
		fmt.Fprintf(stdout, "lost the engine (pid %d); see %s. Starting a new one, which takes up the agents…\n",
			cl.Pid(), relTo(r.Root, engine.PathsFor(r.Root).Log))
	}
}

// A console restarts a lost engine at most engineRestarts times in
// engineRestartWindow.
const (
	engineRestarts      = 3
	engineRestartWindow = 5 * time.Minute
)

// attachRemote runs the console on the engine of another machine, reached
// with `ssh HOST orchestra-tui attach --stdio`.
func attachRemote(target, bin string, opts consoleOptions, stdout, stderr io.Writer) int {
	ctx := context.Background()
	host, dir := remoteTarget(target)
	conn, err := engine.DialSSH(host, dir, bin)
	if err != nil {
		return fail(stderr, fmt.Errorf("--remote %q: %w", target, err))
	}
	cl, err := engine.NewClient(ctx, conn, engine.Options{Watch: true, Version: version(), Kind: "console"})
	if err != nil {
		return fail(stderr, conn.Explain(fmt.Errorf("attach to the engine on %s: %w", target, err)))
	}
	defer cl.Close()
	name := host + ":" + dir
	if dir == "." {
		name = host
	}
	hints := attachHints{
		again: "orchestra-tui --remote " + target,
		stop:  "ssh " + host + " orchestra-tui stop -C " + engine.ShellQuote(dir),
	}
	code, lost := runAttached(ctx, cl, name, hints, opts, stdout, stderr)
	if lost {
		fmt.Fprintf(stdout, "lost the engine on %s (pid %d); see %s there, and run `%s` to attach again\n",
			host, cl.Pid(), filepath.Join(".orchestra", "engine.log"), hints.again)
	}
	return code
}

// attachHints are the commands a detached console names: how to attach
// again, and how to stop the engine.
type attachHints struct{ again, stop string }

// runAttached runs the console on an engine it is attached to; root names
// the repository (a path, or host:path for a remote one). lost reports an
// engine that went away without being asked to stop.
func runAttached(ctx context.Context, cl *engine.Client, root string, hints attachHints, opts consoleOptions, stdout, stderr io.Writer) (code int, lost bool) {
	var mu sync.Mutex
	stopped := false
	opts.Detach = true
	opts.StopEngine = func(ctx context.Context) error {
		lines, err := cl.Stop(ctx)
		if err == nil {
			mu.Lock()
			stopped = true
			opts.after = lines
			mu.Unlock()
		}
		return err
	}
	opts.engine = cl
	code = showConsole(ctx, cl, root, opts, stdout, stderr)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case stopped:
		for _, l := range opts.after {
			fmt.Fprintln(stdout, l)
		}
		fmt.Fprintf(stdout, "engine (pid %d) stopped\n", cl.Pid())
	case isDone(cl.Done()):
		if code == 0 {
			code = 1
		}
		if !cl.Stopping() {
			return code, true
		}
		fmt.Fprintf(stdout, "the engine was stopped; `%s` starts it again\n", hints.again)
	default:
		n := 0
		for _, tv := range cl.Snapshot().Tasks {
			if tv.SessionID != "" {
				n++
			}
		}
		agents, them := "agents keep", "them"
		if n == 1 {
			agents, them = "agent keeps", "it"
		}
		if n == 0 {
			fmt.Fprintf(stdout, "detached: the engine (pid %d) keeps running, with no agent at work.\n`%s` attaches again; `%s` stops it.\n",
				cl.Pid(), hints.again, hints.stop)
			break
		}
		fmt.Fprintf(stdout, "detached: %d %s running in the engine (pid %d).\n`%s` attaches again; `%s` stops %s.\n",
			n, agents, cl.Pid(), hints.again, hints.stop, them)
	}
	return code, false
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

type consoleOptions struct {
	NoAnim   bool
	LeaveKey string
	Record   string
	// Script, if set, runs alongside the console (the demo's operator).
	Script func(ctx context.Context, p *tea.Program)
	// Detach and StopEngine are the ui options of an attached console.
	Detach     bool
	StopEngine func(ctx context.Context) error
	// engine, when set, is the connection whose end quits the console.
	engine *engine.Client
	after  []string // what a stop from the console said, per session
}

// runConsole runs the coordinator in this process with the console on it
// (the demo and `run`); quitting stops every agent.
func runConsole(ctx context.Context, o *coord.Opened, opts consoleOptions, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- o.Run(ctx) }()
	// The console's first frame is the history: wait until the coordinator
	// has loaded the store, or has failed to.
	select {
	case <-o.Loaded():
	case err := <-errc:
		if err == nil {
			return 0
		}
		return fail(stderr, err)
	}
	code := showConsole(ctx, o, o.Repo.Root, opts, stdout, stderr)
	cancel()
	if err := <-errc; err != nil {
		return fail(stderr, err)
	}
	return code
}

// showConsole runs the console program on any engine until it quits.
func showConsole(ctx context.Context, e coord.Engine, root string, opts consoleOptions, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The engine has read orchestra.toml already and refused a bad one;
	// here it only says how this console alerts its operator and which
	// harnesses the form offers. A remote repository's file is not here:
	// the defaults, and no harness list (this machine's PATH is not its).
	cfg, local := config.Default(), false
	if fi, err := os.Stat(root); err == nil && fi.IsDir() {
		if c, err := config.Load(root); err == nil {
			cfg, local = c, true
		}
	}
	var harnesses []ui.HarnessInfo
	if local {
		harnesses = formHarnesses(cfg, root)
	}
	alert := !opts.NoAnim // recordings and CI get no bells
	m := ui.New(e, ui.Options{NoAnim: opts.NoAnim, LeaveFocusKey: opts.LeaveKey, RepoName: filepath.Base(root), Author: author(),
		Detach: opts.Detach, StopEngine: opts.StopEngine,
		Bell: alert && cfg.Notify.Bell, Desktop: alert && cfg.Notify.Desktop, Harnesses: harnesses})
	out := stdout
	var rec *castRecorder
	if opts.Record != "" {
		var err error
		if rec, err = newCastRecorder(opts.Record, stdout); err != nil {
			return fail(stderr, err)
		}
		out = rec
	}
	// A console sits most of its life on a screen that barely changes
	// (a clock of seconds in its header): a second after its last frame
	// of some size it hands back the heap it no longer uses and the pages
	// of the binary its start and its drawing touched (host.Lighten),
	// which the next frame faults back in from the page cache
	// (bench/memory.sh).
	active, stopTrim := host.TrimWhenQuiet(consoleTrimQuiet, host.Lighten)
	defer stopTrim()
	out = noteWrites(out, active)
	// 60 frames a second, the rate the engine sends a pane at and a
	// display's: a key's echo waits for the renderer's next tick, and at 30
	// that wait made typing into a focused pane take 24 ms to the screen
	// (p50, bench/keyscreen.sh; 14 ms at 60, 9 ms at 120). Each tick wakes
	// an idle console even when nothing changed: its idle CPU with 8
	// sessions was 1.0% of a core at 30, 1.3-1.5% at 60 and 2.2-2.5% at
	// 120 (bench/console.sh, at load 5-8).
	progOpts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(out), tea.WithFPS(60)}
	if profile, forced := consoleColors(cfg.Console.Colors, os.Environ()); forced {
		progOpts = append(progOpts, tea.WithColorProfile(profile))
	}
	p := tea.NewProgram(m, progOpts...)
	defer catchResizes(p)()
	stop := ui.Subscribe(p, e)
	scripted := make(chan struct{})
	if opts.Script != nil {
		go func() { defer close(scripted); opts.Script(ctx, p) }()
	} else {
		close(scripted)
	}
	if opts.engine != nil {
		// The engine going away ends an attached console: it has nothing
		// left to show or command.
		go func() {
			select {
			case <-opts.engine.Done():
				p.Quit()
			case <-ctx.Done():
			}
		}()
	}
	_, runErr := p.Run()
	stop()
	interrupted := ctx.Err() != nil
	cancel()
	// The script reads what the run left (the demo's proofs): it ends
	// before the store is closed.
	<-scripted
	if rec != nil {
		if cerr := rec.Close(); cerr != nil && runErr == nil {
			runErr = cerr
		}
	}
	if runErr != nil && runErr != tea.ErrProgramKilled && !interrupted {
		return fail(stderr, runErr)
	}
	return 0
}

// consoleTrimQuiet is how long a console must go without a frame of
// consoleBusyWrite bytes or more before it hands back what drawing took.
// A smaller write (a clock's tick, a key's echo: some 150 bytes) is not
// work that took memory, and an idle console writes one every second.
const (
	consoleTrimQuiet = time.Second
	consoleBusyWrite = 1024
)

// noteWrites returns w telling active of each write through it of
// consoleBusyWrite bytes or more. A
// terminal stays one to bubbletea (a whole term.File, as castRecorder
// is), so the console still sizes itself and enters raw mode.
func noteWrites(w io.Writer, active func()) io.Writer {
	if f, ok := w.(ttyFile); ok {
		return activeFile{ttyFile: f, active: active}
	}
	return activeWriter{w: w, active: active}
}

// ttyFile is term.File: what bubbletea takes for a terminal.
type ttyFile interface {
	io.ReadWriteCloser
	Fd() uintptr
}

type activeFile struct {
	ttyFile
	active func()
}

func (a activeFile) Write(p []byte) (int, error) {
	if len(p) >= consoleBusyWrite {
		a.active()
	}
	return a.ttyFile.Write(p)
}

type activeWriter struct {
	w      io.Writer
	active func()
}

func (a activeWriter) Write(p []byte) (int, error) {
	if len(p) >= consoleBusyWrite {
		a.active()
	}
	return a.w.Write(p)
}

func author() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "operator"
}

// catchResizes asks p for the terminal's size again on every SIGWINCH,
// from before p starts. Bubbletea reads the size as it starts and begins
// to listen for SIGWINCH only afterwards: a terminal resized in between (a
// console started in a window that is resized at once, on a loaded
// machine) lost its resize, and the console and every agent's pty kept
// the old size until the next one.
func catchResizes(p *tea.Program) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sig:
				p.Send(tea.RequestWindowSize())
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
