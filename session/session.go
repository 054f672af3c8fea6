package session

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// Session lifecycle:
//
//	Start ──► running ──(WaitReady: ready marker, then quiet)──► confirmed
//	             │                                                  │
//	             └───── program exits, or Stop: SIGTERM to the ─────┘
//	                    group, SIGKILL after grace ──► Done closed
//
// Four goroutines serve a session. The reader moves pty output into the
// recording and the parse queue; the parser feeds the queue to the emulator
// and signals each change (parse.go), so parsing never blocks the pty read;
// the writer moves queued input (operator typing, pastes, emulator replies)
// to the pty and records it; the waiter reaps the process, kills what is
// left of its process group, waits for the reader and the parser to drain,
// then closes everything and Done.

// Params says what session to start.
type Params struct {
	// Spec is the harness, already expanded.
	Spec Spec
	// Dir is the program's working directory.
	Dir string
	// Cols and Rows size the pty and the emulator.
	Cols, Rows int
	// History is how many lines of scrollback the emulator keeps; 0 means
	// vt.DefaultHistory (10,000), negative keeps none.
	History int
	// Environ is the console's environment to scrub; nil means os.Environ().
	Environ []string
	// CastPath is the asciicast v2 file to write; "" records nothing.
	CastPath string
	// Now is the clock for the recording and LastOutput; nil means time.Now.
	Now func() time.Time
	// Brief is appended as the last argv element when the spec's delivery
	// is "arg"; it is ignored otherwise.
	Brief string
	// RecordMax caps the recording's size in bytes (0: no cap); past it
	// the recording ends with a marker saying where it was cut.
	RecordMax int64
	// TaskID and SessionID mark the program's environment (TaskEnv,
	// SessionEnv), so descendants that leave its process group are still
	// found and stopped with it.
	TaskID, SessionID string
	// Owner is the owner mark (OwnerEnv, OwnerMark) of the engine that
	// starts the session: its sweeps match its own sessions only. ""
	// marks none (an engine's sweep then takes the session as its own).
	Owner string
	// Banner is a line shown at the top of the pane before anything the
	// program prints (and recorded as its first output): what a pane that
	// takes its brief as a file says, above the shell's first prompt.
	Banner string
}

// Session is one agent process in a pty.
type Session struct {
	spec     Spec
	now      func() time.Time
	cmd      *exec.Cmd
	ptmx     *os.File
	term     *vtTerminal
	cast     *castWriter
	castPath string
	in       *inputQueue
	submit   []byte
	ready    *regexp.Regexp
	pending  *regexp.Regexp
	queued   *regexp.Regexp
	volatile []*regexp.Regexp

	// outMu keeps the recording's order of output and resize events the
	// same as the order the emulator sees them, so a replay matches. It
	// also guards cols and rows, the pty's size.
	outMu      sync.Mutex
	cols, rows int
	ptyClosed  bool
	parse      *parseQueue
	changed    chan struct{}
	sigMu      sync.Mutex
	sig        chan struct{} // closed and replaced on every change
	lastOutput atomic.Int64  // unix nanoseconds

	inMu         sync.Mutex
	lastInput    []byte
	lastInputVer uint64

	readerDone chan struct{}
	parserDone chan struct{}
	done       chan struct{}
	exitCode   int
	// taskID, sessionID and owner are the marks; treeErr says what of the
	// session's tree outlived it (set before done is closed).
	taskID, sessionID, owner string
	treeErr                  error
	// cg is the session's cgroup, nil where the machine offers none.
	cg *cgroup
	// own are the agent CLI's own processes, whose time on themselves
	// CPU leaves out.
	own ownProcs
}

// Start launches the spec's program in a new pty, in a session and process
// group of its own, with the scrubbed environment and the exact argv.
func Start(p Params) (*Session, error) {
	spec := p.Spec
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if p.Cols <= 0 || p.Rows <= 0 {
		return nil, fmt.Errorf("start %s: terminal size %dx%d is not positive", spec.Name, p.Cols, p.Rows)
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	environ := p.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env := ScrubEnv(environ, spec)
	if p.TaskID != "" && p.SessionID != "" {
		env = append(env, TaskEnv+"="+p.TaskID, SessionEnv+"="+p.SessionID)
		if p.Owner != "" {
			env = append(env, OwnerEnv+"="+p.Owner)
		}
	}
	argv := append([]string(nil), spec.Argv...)
	if spec.Delivery == DeliveryArg && p.Brief != "" {
		argv = append(argv, p.Brief)
	}
	path, err := lookPath(argv[0], envValue(env, "PATH"), p.Dir)
	if err != nil {
		return nil, fmt.Errorf("start harness %q: %w", spec.Name, err)
	}
	submit, err := spec.SubmitBytes()
	if err != nil {
		return nil, err
	}
	s := &Session{
		spec: spec, now: now, submit: submit, castPath: p.CastPath, taskID: p.TaskID, sessionID: p.SessionID, owner: p.Owner,
		changed: make(chan struct{}, 1), sig: make(chan struct{}),
		in: newInputQueue(), readerDone: make(chan struct{}), done: make(chan struct{}),
		parse: newParseQueue(), parserDone: make(chan struct{}), cols: p.Cols, rows: p.Rows,
		own: ownProcs{grace: spec.OwnGrace.Duration},
	}
	if spec.Ready != "" {
		s.ready = regexp.MustCompile(spec.Ready)
	}
	if spec.Pending != "" {
		s.pending = regexp.MustCompile(spec.Pending)
	}
	if spec.Queued != "" {
		s.queued = regexp.MustCompile(spec.Queued)
	}
	for _, v := range spec.Volatile {
		s.volatile = append(s.volatile, regexp.MustCompile(v))
	}
	if p.CastPath != "" {
		if err := os.MkdirAll(filepath.Dir(p.CastPath), 0o700); err != nil {
			return nil, fmt.Errorf("start harness %q: recording directory: %w", spec.Name, err)
		}
		shell := envValue(env, "SHELL")
		if shell == "" {
			shell = "/bin/sh"
		}
		s.cast, err = createCast(p.CastPath, p.Cols, p.Rows, map[string]string{"TERM": "xterm-256color", "SHELL": shell}, now)
		if err != nil {
			return nil, fmt.Errorf("start harness %q: %w", spec.Name, err)
		}
		s.cast.max = p.RecordMax
	}
	becomeSubreaper()
	restoreChildSignals()
	s.term = newTerminal(p.Cols, p.Rows, p.History, func(b []byte) { s.in.push(b) })
	s.cmd = &exec.Cmd{Path: path, Args: argv, Env: env, Dir: p.Dir}
	attrs := &syscall.SysProcAttr{Setsid: true, Setctty: true}
	s.cg = newCgroup(p.Owner, p.TaskID, p.SessionID)
	s.cg.attach(attrs)
	size := &pty.Winsize{Cols: uint16(p.Cols), Rows: uint16(p.Rows)}
	s.ptmx, err = pty.StartWithAttrs(s.cmd, size, attrs)
	if err != nil && s.cg != nil {
		// The kernel refused to start it in the cgroup: start it
		// without, as on a machine with none (the marks still hold).
		_ = s.cg.end("", 0, 0)
		s.cg = nil
		s.cmd = &exec.Cmd{Path: path, Args: argv, Env: env, Dir: p.Dir}
		s.ptmx, err = pty.StartWithAttrs(s.cmd, size, &syscall.SysProcAttr{Setsid: true, Setctty: true})
	}
	s.cg.started()
	if err != nil {
		_ = s.term.Close()
		_ = s.cast.Close()
		return nil, fmt.Errorf("start harness %q (%s): %w", spec.Name, path, err)
	}
	s.lastOutput.Store(now().UnixNano())
	s.markProgram() // its tree as it stands at the ready prompt follows (WaitReady)
	if p.Banner != "" {
		// Before the read loop starts, so it is first whatever the
		// program prints.
		b := []byte(shownOnly(p.Banner) + "\r\n")
		s.cast.event("o", b)
		s.parse.push(b)
	}
	go s.in.run(s.ptmx, func(b []byte) { s.cast.event("i", b) })
	go s.readLoop()
	go s.parseLoop()
	go s.waitLoop()
	return s, nil
}

// readLoop moves program output into the recording and the parse queue.
// It waits only when the queue is full, never for a parse.
func (s *Session) readLoop() {
	defer close(s.readerDone)
	buf := make([]byte, 32<<10)
	for {
		s.parse.waitRoom()
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			s.outMu.Lock()
			s.cast.event("o", buf[:n])
			s.parse.push(buf[:n])
			s.outMu.Unlock()
			if n == len(buf) {
				// A full read means more is waiting: as in feed, let
				// other panes' goroutines run before the next one.
				runtime.Gosched()
			}
		}
		if err != nil {
			return // EIO once every holder of the pty's other end is gone
		}
	}
}

// drainGrace bounds the wait for the reader after the process group was
// killed: a descendant that left the group may still hold the pty open.
const drainGrace = 2 * time.Second

// hangupWait is how long Stop lets the hangup alone work before it sends
// SIGTERM too.
const hangupWait = 300 * time.Millisecond

// waitLoop reaps the program, then tears the session down.
func (s *Session) waitLoop() {
	err := s.cmd.Wait()
	s.exitCode = exitCode(s.cmd, err)
	// Nothing of the program's group may outlive it, nor any descendant
	// that left the group (setsid, nohup, a double fork): those are found
	// by the session's mark.
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	reapGroup(pgid)
	if s.cg != nil {
		// The cgroup holds every descendant, a clean environment's too,
		// and is read in one file instead of every process's environment.
		s.treeErr = s.cg.end(fmt.Sprintf("stop harness %q", s.spec.Name), pgid, 0)
	} else {
		s.treeErr = stopSession(s.owner, s.taskID, s.sessionID, pgid, 0)
	}
	t := time.NewTimer(drainGrace)
	select {
	case <-s.readerDone:
	case <-t.C:
	}
	t.Stop()
	s.in.close()
	s.outMu.Lock() // Resize uses the descriptor under it
	_ = s.ptmx.Close()
	s.ptyClosed = true
	s.outMu.Unlock()
	<-s.readerDone
	s.parse.close()
	<-s.parserDone
	_ = s.term.Close()
	_ = s.cast.Close()
	close(s.done)
	s.notify()
}

// reapGroup collects the killed members of process group pgid that were
// re-parented to this process, so none is left as a zombie in the group.
// Children in other groups (other sessions, other packages' commands) are
// not touched.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-pgid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return // ECHILD: none left
		}
	}
}

// exitCode returns the program's exit status, 128+signal if a signal ended it.
func exitCode(cmd *exec.Cmd, err error) int {
	st := cmd.ProcessState
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// notify wakes everyone waiting for a change.
func (s *Session) notify() {
	s.sigMu.Lock()
	close(s.sig)
	s.sig = make(chan struct{})
	s.sigMu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// changeSignal returns a channel closed at the next change.
func (s *Session) changeSignal() <-chan struct{} {
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	return s.sig
}

// View returns the session's live terminal view.
func (s *Session) View() View { return s.term }

// Changed returns a channel that receives (without ever blocking the
// session) after output reaches the screen. It has one reader: the
// coordinator, which turns it into pane-dirty notices.
func (s *Session) Changed() <-chan struct{} { return s.changed }

// Trim drops the buffers a burst of output grew and an idle session does
// not need (the queue between the pty's reader and the emulator); the
// next output allocates them again.
func (s *Session) Trim() { s.parse.trim() }

// LastOutput returns when output last reached the screen (the start time
// before any output).
func (s *Session) LastOutput() time.Time { return time.Unix(0, s.lastOutput.Load()) }

// Done is closed once the program has exited and the session is torn down.
func (s *Session) Done() <-chan struct{} { return s.done }

// ExitCode returns the program's exit status once Done is closed (128+N if
// signal N ended it); -1 before.
func (s *Session) ExitCode() int {
	select {
	case <-s.done:
		return s.exitCode
	default:
		return -1
	}
}

// TreeErr says, once Done is closed, what of the program's tree outlived
// it (a *RemainError), or nil.
func (s *Session) TreeErr() error {
	select {
	case <-s.done:
		return s.treeErr
	default:
		return nil
	}
}

// Pid returns the program's process id, which is also its process group id.
func (s *Session) Pid() int { return s.cmd.Process.Pid }

// CastPath returns the recording's path, "" if none.
func (s *Session) CastPath() string { return s.castPath }

// Spec returns the harness the session runs.
func (s *Session) Spec() Spec { return s.spec }

// Stop ends the program's whole process tree: its process group and every
// descendant that left it (found by the session's mark) get SIGTERM (the
// group SIGHUP before it), then
// SIGKILL if the program has not exited after grace. It returns once the
// session is torn down, or, when something survives SIGKILL for longer
// than the teardown allows (a process stuck in the kernel), a
// *RemainError naming the pids left instead of hanging.
func (s *Session) Stop(grace time.Duration) error {
	select {
	case <-s.done:
		return s.treeErr
	default:
	}
	pgid := s.cmd.Process.Pid
	// SIGHUP first, as a closing terminal sends: an interactive shell
	// ignores SIGTERM and would otherwise wait out the grace to be killed.
	// An agent that ends on the hangup ends of it alone, so its exit
	// status says hangup every time rather than whichever signal won.
	_ = syscall.Kill(-pgid, syscall.SIGHUP)
	t := time.NewTimer(min(grace, hangupWait))
	defer t.Stop()
	select {
	case <-s.done:
		return s.treeErr
	case <-t.C:
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop harness %q (pid %d): %w", s.spec.Name, pgid, err)
	}
	if s.cg != nil {
		s.cg.signal(pgid, syscall.SIGTERM)
	} else {
		signalSession(s.owner, s.taskID, s.sessionID, pgid, syscall.SIGTERM)
	}
	t.Reset(grace)
	select {
	case <-s.done:
		return s.treeErr
	case <-t.C:
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill harness %q (pid %d): %w", s.spec.Name, pgid, err)
	}
	s.cg.kill()
	t.Reset(grace + drainGrace + 2*time.Second)
	select {
	case <-s.done:
		return s.treeErr
	case <-t.C:
		return &RemainError{What: fmt.Sprintf("stop harness %q", s.spec.Name), Pids: []int{pgid}}
	}
}

// lookPath resolves name like exec.LookPath, but in the session's PATH and
// relative to its working directory.
func lookPath(name, pathEnv, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("program %q: %w", name, err)
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would depend on the worktree
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("program %q not found in the session's PATH %q", name, pathEnv)
}

// executable reports why path cannot be run, or nil.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// envValue returns NAME's value in a KEY=VALUE list.
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// Size returns the pty's size: the last one Start or Resize set. The
// emulator takes it on once the output read before the resize is parsed.
func (s *Session) Size() (cols, rows int) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	return s.cols, s.rows
}

// Resize changes the pty's and the emulator's size and records an "r"
// event; asking for the size the pty has already does nothing. The program
// learns of it through SIGWINCH from the kernel.
func (s *Session) Resize(cols, rows int) error {
	if cols <= 0 || rows <= 0 {
		return fmt.Errorf("resize harness %q: size %dx%d is not positive", s.spec.Name, cols, rows)
	}
	select {
	case <-s.done:
		return fmt.Errorf("resize harness %q: it has exited", s.spec.Name)
	default:
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.ptyClosed {
		return fmt.Errorf("resize harness %q: it has exited", s.spec.Name)
	}
	if cols == s.cols && rows == s.rows {
		return nil
	}
	if err := pty.Setsize(s.ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		return fmt.Errorf("resize harness %q: %w", s.spec.Name, err)
	}
	s.cols, s.rows = cols, rows
	// Queued behind the output read so far, so the emulator parses that at
	// the old size and what the program draws after SIGWINCH at the new
	// one; recorded at the same point in the stream.
	s.cast.resize(cols, rows)
	s.parse.resize(cols, rows)
	return nil
}
