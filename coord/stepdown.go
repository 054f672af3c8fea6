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
//
// The freeze above needs the engine to run, and an engine stopped on its
// own (SIGSTOP, a stalled VM) while its session hosts run on freezes
// nothing. So each session host has a dead-man switch (host.Client.Trust):
// after every heartbeat that landed, the loop trusts each of its live
// sessions' hosts until the end of the engine's own trust window, and a
// host whose trust runs out with no newer one freezes its agent itself. The
// loop sends it, not the heartbeat, and only after checkTrust found the
// engine standing: after a lapse the stand-up first stops the sessions
// whose tasks were taken over, and a trust never thaws one of those.

// StepDownMargin is the share of the TTL an engine keeps as its safety
// margin: it steps down at TTL minus TTL/StepDownMargin after the start of
// its last heartbeat that landed.
const StepDownMargin = 3

// stepDown is the liveness an engine trusts in itself. mu guards the beat
// fields and frozen, which the heartbeat goroutine and the watchdog write;
// the loop reads them. What it sees of the coordinator is the loop
// (loopView), the store and this engine's holder name, the fleet's TTL,
// the live sessions (to freeze them) and three functions of the loop's.
type stepDown struct {
	mu sync.Mutex
	// armed is set by the first heartbeat that landed: a coordinator that
	// records no heartbeat (no engine around it) never steps down.
	armed  bool
	lastOK time.Time // start of the last heartbeat that landed
	// lapsed is set when a heartbeat landed after the trust had run out.
	lapsed bool
	// beats counts the heartbeats that landed; trustedBeat (loop-owned)
	// is the one the hosts were last trusted after.
	beats       uint64
	trustedBeat uint64
	// frozen are the agents frozen by the step-down, by task.
	frozen map[task.ID]worker.Handle
	down   atomic.Bool
	since  time.Time
	// said is set once the loop has told the operator of the step-down
	// (loop-owned, as is text).
	said bool
	text string

	loop   loopView
	st     store.Store
	holder string
	ttl    time.Duration
	// shared says the store is shared with other engines: alone, an
	// engine never steps down.
	shared  bool
	live    *sync.Map // task.ID -> worker.Handle, every live session
	stopped <-chan struct{}
	// run is the loop's run of a task, nil for none; on the loop.
	run func(task.ID) *run
	// probe asks the store once, on the loop, when nothing else there
	// does, so an outage is told from a heartbeat that is merely slow.
	probe func(context.Context)
	// fencedOut stops r, whose task another engine took over under token,
	// writing nothing of the task.
	fencedOut func(ctx context.Context, r *run, token int64)
}

// trustWindow is how long after the start of a heartbeat that landed the
// engine trusts itself.
func (sd *stepDown) trustWindow() time.Duration {
	return sd.ttl - sd.ttl/StepDownMargin
}

// NoteBeat tells the coordinator that a heartbeat started at sent (by
// time.Now, whose monotonic reading is what counts) landed (err nil) or
// failed. The engine's heartbeat calls it after every write.
func (c *Coordinator) NoteBeat(sent time.Time, err error) { c.sd.noteBeat(sent, err) }

func (sd *stepDown) noteBeat(sent time.Time, err error) {
	if err != nil {
		return
	}
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.armed && sent.Sub(sd.lastOK) > sd.trustWindow() {
		sd.lapsed = true
	}
	if !sd.armed || sent.After(sd.lastOK) {
		sd.lastOK = sent
	}
	sd.armed = true
	sd.beats++
	sd.loop.poke()
}

// trustedAt reports whether the engine may still take itself for live at
// now (by time.Now).
func (sd *stepDown) trustedAt(now time.Time) bool {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	return !sd.armed || now.Sub(sd.lastOK) < sd.trustWindow()
}

// trusted reports whether the engine may act as the holder of its leases
// now: not stepped down, within its trust window.
func (sd *stepDown) trusted() bool {
	return !sd.down.Load() && (!sd.shared || sd.trustedAt(time.Now()))
}

// SteppedDown is the operator's sentence while the engine has stepped
// down, "" otherwise. Safe from any goroutine.
func (c *Coordinator) SteppedDown() string { return c.sd.sentence() }

func (sd *stepDown) sentence() string {
	if !sd.down.Load() {
		return ""
	}
	sd.mu.Lock()
	defer sd.mu.Unlock()
	return fmt.Sprintf("This engine has stepped down since %s: its heartbeat has not reached the store for %s (the TTL is %s). "+
		"It places and pushes nothing, and its %d sessions are frozen (SIGSTOP) so that another engine may take their tasks over safely; "+
		"they go on by themselves once its heartbeat lands again, unless their tasks were taken over.",
		sd.since.Format(time.TimeOnly), time.Since(sd.lastOK).Round(time.Second), sd.ttl, len(sd.frozen))
}

// watchTrust is the watchdog: it steps the engine down as soon as its trust
// runs out, whatever the loop is doing. It returns when ctx ends.
func (sd *stepDown) watchTrust(ctx context.Context) {
	every := min(time.Second, sd.trustWindow()/10)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sd.stopped:
			return
		case <-t.C:
			if !sd.down.Load() && !sd.trustedAt(time.Now()) {
				sd.freezeAll()
				sd.loop.poke()
			}
		}
	}
}

// freezeAll steps down: every live agent of this engine is frozen.
func (sd *stepDown) freezeAll() {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.down.Load() {
		return
	}
	sd.frozen = map[task.ID]worker.Handle{}
	sd.live.Range(func(k, v any) bool {
		id, h := k.(task.ID), v.(worker.Handle)
		if freeze(h) == nil {
			sd.frozen[id] = h
		}
		return true
	})
	sd.since = time.Now()
	sd.down.Store(true)
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
func (sd *stepDown) checkTrust(ctx context.Context) bool {
	if !sd.shared {
		return false
	}
	// The beat the hosts may be trusted after is read with the lapse: a
	// lapsed beat that lands after this read is seen, and stood up from,
	// on the next iteration before any trust after it is sent.
	sd.mu.Lock()
	lapsed := sd.lapsed
	sd.lapsed = false
	beat := trustBeat{n: sd.beats, lastOK: sd.lastOK}
	sd.mu.Unlock()
	if lapsed {
		sd.freezeAll() // a no-op when the watchdog did it first
	}
	if !sd.down.Load() {
		sd.extendTrust(beat)
		return false
	}
	if !sd.said {
		sd.said = true
		sd.text = sd.sentence()
		sd.loop.record(ctx, sd.loop.refusal("", "", task.ReasonStoreFailed, sd.text))
	}
	if !sd.trustedAt(time.Now()) {
		// Stepped down: one read tells an outage (the operator's banner
		// and PostgreSQL's advice) from a heartbeat that is merely slow.
		sd.probe(ctx)
		return true
	}
	if !sd.standUp(ctx) {
		return true
	}
	sd.extendTrust(beat)
	return false
}

// Truster is a session handle whose agent stops itself unless it is
// trusted anew: a session host's dead-man switch (host.Client), or a
// test's fake. Trust must not block.
type Truster interface {
	// Trust lets the agent run until until (by this process's monotonic
	// clock); past it, with no newer trust, the agent is frozen, and a
	// newer trust thaws it.
	Trust(until time.Time)
}

var _ Truster = (*worker.Run)(nil)

// trustBeat is a heartbeat that landed: its count and its start.
type trustBeat struct {
	n      uint64
	lastOK time.Time
}

// extendTrust trusts every live session's host until the end of the trust
// window of beat, once per beat: one message per session per heartbeat. A
// session being stopped (one whose task was taken over) is never trusted,
// nor is any once the window has passed.
func (sd *stepDown) extendTrust(beat trustBeat) {
	if beat.n == sd.trustedBeat {
		return
	}
	sd.trustedBeat = beat.n
	until := beat.lastOK.Add(sd.trustWindow())
	if !time.Now().Before(until) {
		return
	}
	sd.live.Range(func(k, v any) bool {
		tr, ok := v.(Truster)
		if !ok {
			return true
		}
		if r := sd.run(k.(task.ID)); r == nil || r.w != v.(worker.Handle) || r.stopping {
			return true
		}
		tr.Trust(until)
		return true
	})
}

// trustLaunched trusts the host of a session that just went live (launched
// or taken up again) until the end of the window of the last beat that
// landed, as extendTrust would have had it been live then: a session
// launched between two beats is under its host's dead-man switch from its
// start, so an engine stopped before its next beat leaves no new agent
// running untrusted (a host never trusted never freezes), and one taken up
// after its engine died is thawed before anything is typed into it.
// Nothing before the first beat, nor while stepped down or past the
// window. On the loop.
func (sd *stepDown) trustLaunched(h worker.Handle) {
	tr, ok := h.(Truster)
	if !ok || !sd.shared || sd.down.Load() {
		return
	}
	sd.mu.Lock()
	armed, lastOK := sd.armed, sd.lastOK
	sd.mu.Unlock()
	if until := lastOK.Add(sd.trustWindow()); armed && time.Now().Before(until) {
		tr.Trust(until)
	}
}

// standUp thaws the frozen sessions whose leases are still this engine's
// and stops the others; it reports false, to try again on the next tick,
// when the store cannot tell.
func (sd *stepDown) standUp(ctx context.Context) bool {
	sd.mu.Lock()
	frozen := sd.frozen
	sd.mu.Unlock()
	type verdict struct {
		r     *run
		token int64
	}
	var keep, lost []verdict
	for id := range frozen {
		r := sd.run(id)
		if r == nil {
			continue
		}
		l, err := sd.st.LeaseGet(ctx, id)
		switch {
		case err == nil && l.Holder == sd.holder && l.Token == r.token:
			keep = append(keep, verdict{r, r.token})
		case err == nil || errors.Is(err, store.ErrNotFound):
			token, terr := sd.st.TaskToken(ctx, id)
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
		if r := sd.run(id); r == nil || r.w != h {
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
		sd.fencedOut(ctx, v.r, v.token)
	}
	sd.mu.Lock()
	sd.frozen = nil
	down := time.Since(sd.since).Round(time.Second)
	sd.down.Store(false)
	sd.mu.Unlock()
	sd.said, sd.text = false, ""
	sd.loop.record(ctx, sd.loop.event("", "", task.EvStoreRecovered, fmt.Sprintf(
		"This engine's heartbeat lands again after %s stepped down; placement resumes. %d frozen sessions go on; %d whose tasks another engine took over are stopped.",
		down, kept, len(lost))))
	return true
}
