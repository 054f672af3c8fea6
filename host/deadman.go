package host

import (
	"fmt"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// deadMan is the host's dead-man switch (opTrust). An engine on a shared
// store steps down and freezes its agents when its own heartbeat stops
// landing, but an engine that is stopped itself (SIGSTOP, a stalled VM)
// freezes nothing, while its hosts and agents run on and another engine
// takes the task over. So the engine trusts each of its hosts, after every
// heartbeat that landed, for what is left of its own trust window; when
// that runs out with no newer trust, the host freezes its agent's process
// group itself, as the engine's step-down would, and says so in the pane.
// A newer trust thaws it. A host that was never trusted (a lone engine,
// an engine older than the request) never freezes.
type deadMan struct {
	srv *Server
	mu  sync.Mutex
	// gen counts trusts: a timer of an older one does nothing.
	gen    uint64
	timer  *time.Timer
	frozen bool // the host froze the agent and has not thawed it
}

// trust lets the agent run for d from now: it thaws an agent the switch
// froze and re-arms it. A trust that came too late (d <= 0) thaws nothing
// and freezes the agent at once.
func (dm *deadMan) trust(d time.Duration) error {
	select {
	case <-dm.srv.exited:
		return nil // nothing to freeze any more
	default:
	}
	dm.mu.Lock()
	defer dm.mu.Unlock()
	if d <= 0 && dm.frozen {
		dm.srv.logf("a trust came %s after its deadline: the agent stays frozen", -d)
		return nil
	}
	dm.gen++
	gen := dm.gen
	if dm.timer != nil {
		dm.timer.Stop()
	}
	if d <= 0 {
		dm.srv.logf("a trust came %s after its deadline: the agent is frozen", -d)
		d = 0
	} else if dm.frozen {
		dm.frozen = false
		pid := dm.srv.sess.Pid()
		if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil {
			dm.srv.logf("thaw the agent's process group %d: %v", pid, err)
		}
		dm.srv.logf("agent (pid %d) thawed: the engine trusts it again for %s", pid, d)
		_ = dm.srv.sess.Notice(fmt.Sprintf("orchestra: the engine's trust came again: this session goes on (trusted for %s more).", d.Round(time.Millisecond)))
	}
	dm.timer = time.AfterFunc(d, func() { dm.expire(gen, d) })
	return nil
}

// expire freezes the agent once the trust of generation gen ran out.
func (dm *deadMan) expire(gen uint64, d time.Duration) {
	dm.mu.Lock()
	if gen != dm.gen || dm.frozen {
		dm.mu.Unlock()
		return
	}
	select {
	case <-dm.srv.exited:
		dm.mu.Unlock()
		return
	default:
	}
	pid := dm.srv.sess.Pid()
	if pid <= 1 {
		dm.mu.Unlock()
		return
	}
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		dm.mu.Unlock()
		dm.srv.logf("freeze the agent's process group %d: %v", pid, err)
		return
	}
	dm.frozen = true
	// The leader, this host's child, is seen stopped (or gone) before the
	// pane says so, so the line is true when it shows; under mu, so no
	// trust thaws it before (a thaw would leave the wait without a stop
	// to see). WNOWAIT leaves the report in place; the session's own wait
	// asks for exits only.
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	dm.mu.Unlock()
	dm.srv.logf("agent (pid %d) frozen: no trust from an engine for %s", pid, d)
	_ = dm.srv.sess.Notice(fmt.Sprintf("orchestra: frozen (SIGSTOP) by its session host: the engine's trust ran out %s after it came, with no newer one. "+
		"The engine may be stopped or cut off from the store, and another engine may take this task over; this session goes on once an engine trusts it again.", d.Round(time.Millisecond)))
}

// stop disarms the switch (the agent exited).
func (dm *deadMan) stop() {
	dm.mu.Lock()
	defer dm.mu.Unlock()
	dm.gen++
	if dm.timer != nil {
		dm.timer.Stop()
	}
}
