package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// An engine stopped with SIGSTOP (or held by a debugger, or frozen with its
// machine's cgroup) still has its socket: the kernel takes a connection on
// its behalf and the handshake waits for an answer that never comes. A
// command used to wait its whole timeout and fail with "engine handshake:
// context deadline exceeded", naming nothing, and the console showed a
// blank screen. The lock file names the engine's pid and /proc says when
// that process is stopped: a dial looks, and says so at once.

// stoppedPoll is how often a dial waiting for its handshake looks at
// whether the engine is stopped. A stopped engine is told within it.
const stoppedPoll = 100 * time.Millisecond

// HungError is an engine that holds the repository's lock but does not
// answer on its socket: stopped (SIGSTOP), or not answering before the
// command's deadline.
type HungError struct {
	Pid     int
	Stopped bool
	// Err is what the dial ended with, for an engine not stopped.
	Err error
}

func (e *HungError) Error() string {
	if e.Stopped {
		return fmt.Sprintf("the engine (pid %d) is stopped (SIGSTOP, or a debugger holds it) and cannot answer; "+
			"`kill -CONT %d` lets it go on, `orchestra-tui stop` ends it and keeps its agents for the next engine", e.Pid, e.Pid)
	}
	return fmt.Sprintf("the engine (pid %d) does not answer (%v); `orchestra-tui stop` ends it and keeps its agents for the next engine", e.Pid, e.Err)
}

func (e *HungError) Unwrap() error { return e.Err }

// DialAnswering is Dial to the engine of p that gives up on an engine
// that cannot answer: a stopped one within stoppedPoll, a *HungError with
// Stopped set; one that holds the lock and has not answered when ctx ends,
// a *HungError wrapping the dial's error.
func DialAnswering(ctx context.Context, p Paths, o Options) (*Client, error) {
	if pid := StoppedHolder(p); pid > 0 {
		return nil, &HungError{Pid: pid, Stopped: true}
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		cl  *Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		cl, err := Dial(dctx, p.Socket, o)
		done <- result{cl, err}
	}()
	tick := time.NewTicker(stoppedPoll)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if r.err != nil && ctx.Err() != nil && Held(p.Lock) {
				if pid := LockHolder(p.Lock); pid > 0 {
					return nil, &HungError{Pid: pid, Err: r.err}
				}
			}
			return r.cl, r.err
		case <-tick.C:
			pid := StoppedHolder(p)
			if pid == 0 {
				continue
			}
			cancel()
			if r := <-done; r.err == nil {
				return r.cl, nil // it answered just before the cancel
			}
			return nil, &HungError{Pid: pid, Stopped: true}
		}
	}
}

// StoppedHolder returns the pid of the engine holding p's lock when that
// process is stopped, else 0.
func StoppedHolder(p Paths) int {
	pid := LockHolder(p.Lock)
	if pid <= 0 || !Stopped(pid) || !Held(p.Lock) {
		return 0
	}
	return pid
}

// Stopped reports whether process pid is stopped by a signal or traced
// (state T or t in /proc/PID/stat). Where /proc is not there it reports
// false: a stopped engine is then found only by the command's deadline.
func Stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) S ...": comm may hold spaces and parentheses, so the
	// state is the field after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && (f[0] == "T" || f[0] == "t")
}

// EndHung ends the engine pid that holds p's lock and does not answer:
// SIGTERM, then, if it still holds the lock after grace (at once, for a
// stopped one), SIGKILL, then it
// waits for the lock to be given up. Its session hosts are other processes
// and are left running, so the next engine takes their agents up. A
// stopped process does not act on SIGTERM before SIGKILL ends it; one
// merely slow may stop on SIGTERM the way it always does.
func EndHung(ctx context.Context, p Paths, pid int, grace time.Duration) error {
	if LockHolder(p.Lock) != pid || !Held(p.Lock) {
		return nil // it ended meanwhile
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return fmt.Errorf("end the engine (pid %d): %w", pid, err)
	}
	if Stopped(pid) {
		grace = 0 // it cannot act on the SIGTERM: waiting changes nothing
	}
	if released(ctx, p, grace) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("end the engine (pid %d): %w", pid, err)
	}
	if !released(ctx, p, time.Minute) {
		return fmt.Errorf("the engine (pid %d) still holds %s after SIGKILL", pid, p.Lock)
	}
	return nil
}

// released waits up to d (or ctx) for p's lock to be free.
func released(ctx context.Context, p Paths, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	// flock has no notification; a short poll stands in for one.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for Held(p.Lock) {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}
