package coord

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// Step-down, river's elector rule. Another engine takes this engine's tasks
// over once its heartbeat is a TTL old by the store's clock. So this engine
// trusts its own liveness only until the start of its last heartbeat that
// landed plus the TTL minus a safety margin, by its own monotonic clock
// (which a skewed wall clock does not move): the beat was stamped after it
// started, so this deadline always falls before anyone may judge it lost.
// Past the deadline the engine steps down: it places nothing, pushes
// nothing, and freezes its sessions (SIGSTOP of each agent's process
// group), so a takeover never finds its predecessor's agent at work. A
// watchdog off the loop does the freezing, so a store call that hangs on
// the loop (a partition) cannot delay it.
//
// Once a heartbeat lands again, the engine stands up: each frozen session
// whose lease is still this engine's is thawed (SIGCONT) and goes on where
// it was; one whose task another engine took over meanwhile is stopped
// while still frozen, without writing anything of the task. A heartbeat
// that lands after a lapse the watchdog did not see (the whole engine was
// stopped, SIGSTOP) goes through the same step-down and stand-up before
// anything else.

// StepDownMargin is the share of the TTL an engine keeps as its safety
// margin: it steps down at TTL minus TTL/StepDownMargin after the start of
// its last heartbeat that landed.
const StepDownMargin = 3

// stepDown is the liveness an engine trusts in itself. mu guards the beat
// fields and frozen, which the heartbeat goroutine and the watchdog write;
// the loop reads them.
type stepDown struct {
	mu sync.Mutex
	// armed is set by the first heartbeat that landed: a coordinator that
	// records no heartbeat (no engine around it) never steps down.
	armed  bool
	lastOK time.Time // start of the last heartbeat that landed
	// lapsed is set when a heartbeat landed after the trust had run out.
	lapsed bool
	// frozen are the agents frozen by the step-down, by task.
	frozen map[task.ID]worker.Handle
	down   atomic.Bool
	since  time.Time
	// said is set once the loop has told the operator of the step-down
	// (loop-owned, as is text).
	said bool
	text string
}

// trustWindow is how long after the start of a heartbeat that landed the
// engine trusts itself.
func (c *Coordinator) trustWindow() time.Duration {
	return c.fleet.ttl - c.fleet.ttl/StepDownMargin
}

// NoteBeat tells the coordinator that a heartbeat started at sent (by
// time.Now, whose monotonic reading is what counts) landed (err nil) or
// failed. The engine's heartbeat calls it after every write.
func (c *Coordinator) NoteBeat(sent time.Time, err error) {
	if err != nil {
		return
	}
	c.sd.mu.Lock()
	defer c.sd.mu.Unlock()
	if c.sd.armed && sent.Sub(c.sd.lastOK) > c.trustWindow() {
		c.sd.lapsed = true
	}
	if !c.sd.armed || sent.After(c.sd.lastOK) {
		c.sd.lastOK = sent
	}
	c.sd.armed = true
	c.poke()
}

// trustedAt reports whether the engine may still take itself for live at
// now (by time.Now).
func (c *Coordinator) trustedAt(now time.Time) bool {
	c.sd.mu.Lock()
	defer c.sd.mu.Unlock()
	return !c.sd.armed || now.Sub(c.sd.lastOK) < c.trustWindow()
}

// trusted reports whether the engine may act as the holder of its leases
// now: not stepped down, within its trust window.
func (c *Coordinator) trusted() bool {
	return !c.sd.down.Load() && (!c.fleet.shared || c.trustedAt(time.Now()))
}

// SteppedDown is the operator's sentence while the engine has stepped
// down, "" otherwise. Safe from any goroutine.
func (c *Coordinator) SteppedDown() string {
	if !c.sd.down.Load() {
		return ""
	}
	c.sd.mu.Lock()
	defer c.sd.mu.Unlock()
	return fmt.Sprintf("This engine has stepped down since %s: its heartbeat has not reached the store for %s (the TTL is %s). "+
		"It places and pushes nothing, and its %d sessions are frozen (SIGSTOP) so that another engine may take their tasks over safely; "+
		"they go on by themselves once its heartbeat lands again, unless their tasks were taken over.",
		c.sd.since.Format(time.TimeOnly), time.Since(c.sd.lastOK).Round(time.Second), c.fleet.ttl, len(c.sd.frozen))
}

// watchTrust is the watchdog: it steps the engine down as soon as its trust
// runs out, whatever the loop is doing. It returns when ctx ends.
func (c *Coordinator) watchTrust(ctx context.Context) {
	every := min(time.Second, c.trustWindow()/10)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.stopped:
			return
		case <-t.C:
			if !c.sd.down.Load() && !c.trustedAt(time.Now()) {
				c.freezeAll()
				c.poke()
			}
		}
	}
}

// freezeAll steps down: every live agent of this engine is frozen.
func (c *Coordinator) freezeAll() {
	c.sd.mu.Lock()
	defer c.sd.mu.Unlock()
	if c.sd.down.Load() {
		return
	}
	c.sd.frozen = map[task.ID]worker.Handle{}
	c.live.Range(func(k, v any) bool {
		id, h := k.(task.ID), v.(worker.Handle)
		if freeze(h) == nil {
			c.sd.frozen[id] = h
		}
		return true
	})
	c.sd.since = time.Now()
	c.sd.down.Store(true)
}

// Freezer is a session handle that can be frozen and thawed itself (a
// test's fake); any other handle is frozen by signalling its agent's
// process group.
type Freezer interface {
	Freeze() error
	Thaw() error
}

func freeze(h worker.Handle) error {
	if f, ok := h.(Freezer); ok {
		return f.Freeze()
	}
	return signalGroup(h.Pid(), syscall.SIGSTOP)
}

func thaw(h worker.Handle) error {
	if f, ok := h.(Freezer); ok {
		return f.Thaw()
	}
	return signalGroup(h.Pid(), syscall.SIGCONT)
}

// signalGroup signals the process group of pid; never pid 0 or 1, which
// would reach this process's own group or init.
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 1 {
		return fmt.Errorf("no agent process (pid %d)", pid)
	}
	return syscall.Kill(-pid, sig)
}

// checkTrust is the loop's side, every iteration: it says a step-down once,
// steps down after a lapse the watchdog missed, and stands up once the
// heartbeat lands again. It reports whether the engine is down.
func (c *Coordinator) checkTrust(ctx context.Context) bool {
	if !c.fleet.shared {
		return false
	}
	c.sd.mu.Lock()
	lapsed := c.sd.lapsed
	c.sd.lapsed = false
	c.sd.mu.Unlock()
	if lapsed {
		c.freezeAll() // a no-op when the watchdog did it first
	}
	if !c.sd.down.Load() {
		return false
	}
	if !c.sd.said {
		c.sd.said = true
		c.sd.text = c.SteppedDown()
		c.record(ctx, c.refusalEvent("", "", task.ReasonStoreFailed, c.sd.text))
	}
	if !c.trustedAt(time.Now()) {
		if !c.sw.outage && c.sw.path == "" {
			// Stepped down, nothing else on the loop asks the store:
			// one read tells an outage (the operator's banner and
			// PostgreSQL's advice) from a heartbeat that is merely slow.
			if _, err := c.st.EngineList(ctx); err != nil {
				c.writeFailed(err)
			}
		}
		return true
	}
	return !c.standUp(ctx)
}

// standUp thaws the frozen sessions whose leases are still this engine's
// and stops the others; it reports false, to try again on the next tick,
// when the store cannot tell.
func (c *Coordinator) standUp(ctx context.Context) bool {
	c.sd.mu.Lock()
	frozen := c.sd.frozen
	c.sd.mu.Unlock()
	type verdict struct {
		r     *run
		token int64
	}
	var keep, lost []verdict
	for id := range frozen {
		r := c.runs[id]
		if r == nil {
			continue
		}
		l, err := c.st.LeaseGet(ctx, id)
		switch {
		case err == nil && l.Holder == c.holder && l.Token == r.token:
			keep = append(keep, verdict{r, r.token})
		case err == nil || errors.Is(err, store.ErrNotFound):
			token, terr := c.st.TaskToken(ctx, id)
			if terr != nil {
				return false
			}
			lost = append(lost, verdict{r, token})
		default:
			return false
		}
	}
	kept := 0
	for id, h := range frozen {
		if r := c.runs[id]; r == nil || r.w != h {
			_ = thaw(h) // ended meanwhile: let it finish its exit
		}
	}
	for _, v := range keep {
		if thaw(frozen[v.r.taskID]) == nil {
			kept++
		}
	}
	for _, v := range lost {
		// Stopped while frozen: a TERM waits, the KILL after the grace
		// ends it without its ever running again beside the new holder.
		c.fencedOut(ctx, v.r, v.token)
	}
	c.sd.mu.Lock()
	c.sd.frozen = nil
	down := time.Since(c.sd.since).Round(time.Second)
	c.sd.down.Store(false)
	c.sd.mu.Unlock()
	c.sd.said, c.sd.text = false, ""
	c.record(ctx, c.event("", "", task.EvStoreRecovered, fmt.Sprintf(
		"This engine's heartbeat lands again after %s stepped down; placement resumes. %d frozen sessions go on; %d whose tasks another engine took over are stopped.",
		down, kept, len(lost))))
	return true
}
