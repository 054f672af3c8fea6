package host

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/sched"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/wire"
	"golang.org/x/sys/unix"
)

// launch is what an engine hands a host it spawns: session.Params, less
// the clock, as JSON on a pipe (the environment in it never touches the
// disk).
type launch struct {
	Spec      session.Spec `json:"spec"`
	Dir       string       `json:"dir"`
	Cols      int          `json:"cols"`
	Rows      int          `json:"rows"`
	History   int          `json:"history"`
	Environ   []string     `json:"environ"`
	CastPath  string       `json:"cast_path"`
	Brief     string       `json:"brief,omitempty"`
	RecordMax int64        `json:"record_max"`
	TaskID    string       `json:"task_id"`
	SessionID string       `json:"session_id"`
	Owner     string       `json:"owner,omitempty"`
	Banner    string       `json:"banner,omitempty"`
}

func launchOf(p session.Params) launch {
	return launch{Spec: p.Spec, Dir: p.Dir, Cols: p.Cols, Rows: p.Rows, History: p.History, Environ: p.Environ,
		CastPath: p.CastPath, Brief: p.Brief, RecordMax: p.RecordMax, TaskID: p.TaskID, SessionID: p.SessionID, Owner: p.Owner, Banner: p.Banner}
}

func (l launch) params() session.Params {
	return session.Params{Spec: l.Spec, Dir: l.Dir, Cols: l.Cols, Rows: l.Rows, History: l.History, Environ: l.Environ,
		CastPath: l.CastPath, Brief: l.Brief, RecordMax: l.RecordMax, TaskID: l.TaskID, SessionID: l.SessionID, Owner: l.Owner, Banner: l.Banner}
}

// Linger is how long a host whose agent exited waits for an engine to
// collect the exit before it goes anyway.
const Linger = 24 * time.Hour

// stopGrace is how long the agent gets between SIGTERM and SIGKILL when
// the host itself is told to stop.
const stopGrace = 2 * time.Second

// Main is the hidden `orchestra-tui host` subcommand: it reads its launch
// from descriptor 3, starts the session, serves it on --socket, reports
// "ready" (or why not) on descriptor 4, and runs until an engine collects
// the agent's exit, SIGTERM stops the agent, or Linger passes after the
// exit. It ignores SIGHUP and SIGINT: only an engine, `orchestra-tui
// stop` or SIGTERM ends it.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("socket", "", "the unix socket to serve the session on")
	version := fs.String("version", "", "the binary's version, for the handshake")
	linger := fs.Duration("linger", Linger, "how long an exited agent's status waits for an engine")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	lg := log.New(stderr, "host: ", log.LstdFlags)
	lighten()
	ready := takeFD(4)
	report := func(msg string) {
		if ready != nil {
			_, _ = io.WriteString(ready, msg+"\n")
			ready.Close()
			ready = nil
		}
	}
	if *sock == "" {
		report("no --socket given")
		fmt.Fprintln(stderr, "orchestra-tui host: --socket is required; this subcommand is started by the engine")
		return 2
	}
	// Caught and dropped, not ignored: an ignored signal stays ignored in
	// the agent across exec, and an agent that ignores SIGHUP cannot be
	// stopped politely, nor one that ignores SIGPIPE end a pipeline.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	var l launch
	if in := takeFD(3); in != nil {
		err := json.NewDecoder(in).Decode(&l)
		in.Close()
		if err != nil {
			report("read the launch: " + err.Error())
			return 1
		}
	} else {
		report("no launch on descriptor 3")
		return 2
	}
	// The agent starts with the kernel's own time slice, not the short
	// one this host inherits from its engine (see below).
	if err := sched.DefaultSlice(); err != nil {
		lg.Printf("scheduling: %v", err)
	}
	s, err := session.Start(l.params())
	if err != nil {
		report(oneLine(err.Error()))
		lg.Printf("start: %v", err)
		return 1
	}
	ln, err := wire.Listen(*sock)
	if err != nil {
		_ = s.Stop(stopGrace)
		report(oneLine(err.Error()))
		return 1
	}
	// A key for the agent wakes this host: ask to be woken before a busy
	// task's slice ends. Only now, so the agent keeps the default.
	if err := sched.ShortSlice(); err != nil {
		lg.Printf("scheduling: %v", err)
	}
	tr := newTrimmer()
	srv := NewServer(s, l.TaskID, l.SessionID, *version, lg.Printf, tr.active)
	go func() { _ = srv.Serve(ln) }()
	lg.Printf("pid %d serving session %s of task %s (agent pid %d) on %s", os.Getpid(), l.SessionID, l.TaskID, s.Pid(), *sock)
	report("ready " + strconv.Itoa(s.Pid()))
	// What the start allocated and dropped (the launch, the harness's
	// spec, the first screens, the code of every package's init) goes
	// back to the kernel now rather than when the scavenger gets to it,
	// and again whenever the session falls quiet after work: an idle host
	// is most of a host's life.
	trim(s)
	go tr.run(trimQuiet, func() { trim(s) }, srv.Exited())
	var lingerC <-chan time.Time
	exited := srv.Exited()
	anchor := AnchorGone()
	for {
		select {
		case <-srv.Collected():
			// The engine has the exit: nothing here is needed any more,
			// the log included.
			_ = os.Remove(strings.TrimSuffix(*sock, ".sock") + ".log")
			return closeUp(ln, *sock)
		case <-exited:
			exited = nil
			t := time.NewTimer(*linger)
			defer t.Stop()
			lingerC = t.C
		case <-lingerC:
			lg.Printf("no engine collected the exit within %s; going", *linger)
			return closeUp(ln, *sock)
		case <-anchor:
			lg.Printf("the process %s names has ended: stopping the agent", AnchorEnv)
			if err := s.Stop(stopGrace); err != nil {
				lg.Printf("stop: %v", err)
			}
			return closeUp(ln, *sock)
		case <-term:
			lg.Printf("SIGTERM: stopping the agent")
			if err := s.Stop(stopGrace); err != nil {
				lg.Printf("stop: %v", err)
			}
			return closeUp(ln, *sock)
		}
	}
}

// closeUp stops serving and removes the socket, so nobody dials a host
// that is going.
func closeUp(ln io.Closer, sock string) int {
	_ = os.Remove(sock)
	_ = ln.Close()
	reapAll()
	return 0
}

// reapAll collects every child that has exited: the host is the subreaper
// of its agent's tree, and a descendant killed after its parent died is
// its child. Left unreaped, it would pass to init as a zombie when the
// host exits, and linger where init does not reap (a container's).
func reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}

// takeFD returns descriptor n as a file, nil when it is not open, and
// keeps it from the agent.
func takeFD(n int) *os.File {
	if _, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0); err != nil {
		return nil
	}
	syscall.CloseOnExec(n)
	return os.NewFile(uintptr(n), "fd"+strconv.Itoa(n))
}

func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}
