package coord

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// No task may be left leased or running with nothing behind it: no session
// being launched or running, no verify gate or commit in flight. Every
// path that ends a run moves its task; two checks make sure of it.
//
// At start-up, checkStore reads the store: a live task must hold a lease of
// a console that is still running (reconcile has just requeued the rest),
// and a session recorded as launching or confirmed must belong to such a
// task; one that does not is marked killed, so no view shows a session
// that nothing runs.
//
// While running, checkStranded runs after every loop iteration: a task this
// console holds in a live state with neither a run nor a gate in flight was
// left behind by a path that forgot to move it. It is requeued, not
// charged, with a refusal that says so, once per lease token; a bug then
// costs a relaunch instead of a task (and `run --headless`) that waits for
// ever.

// checkStore is the start-up check; it runs after reconcile.
func (fs *fleetService) checkStore(ctx context.Context) error {
	// The sessions still recorded as live, of every task: one read
	// whatever the length of the history, made before the leases are
	// read, so a session another engine starts meanwhile is not in it.
	ss, err := fs.st.SessionListLive(ctx)
	if err != nil {
		return fmt.Errorf("list live sessions: %w", err)
	}
	leases, err := fs.st.LeaseList(ctx)
	if err != nil {
		return fmt.Errorf("list leases: %w", err)
	}
	heldBy := map[task.ID]string{}
	for _, l := range leases {
		heldBy[l.TaskID] = l.Holder
	}
	liveHeld := map[task.ID]bool{}
	es, err := fs.st.EngineList(ctx)
	if err != nil {
		return fmt.Errorf("list engines: %w", err)
	}
	engines, now := engineIndex(es), fs.loop.now()
	for _, t := range fs.sortedTasks() {
		if !t.State.Live() {
			continue
		}
		holder, leased := heldBy[t.ID]
		adopted := leased && holder == fs.holder && fs.runs[t.ID] != nil // taken up again (adopt.go)
		live := adopted || leased && holder != fs.holder && holderLive(holder, engines, fs.fleet.host, fs.fleet.root, now, fs.fleet.ttl)
		if !live && fs.fleet.shared {
			// Another engine may have ended it since the load.
			if fresh, err := fs.st.TaskGet(ctx, t.ID); err == nil && !fresh.State.Live() {
				fs.tasks[t.ID] = fresh
				continue
			}
		}
		if !live {
			// reconcile requeues these; reaching here means it could not.
			return fmt.Errorf("task %s is %s but no running console holds it; the store could not be repaired (see the refusal events)", t.ID, t.State)
		}
		liveHeld[t.ID] = true
	}
	for _, s := range ss {
		if liveHeld[s.TaskID] && s.Holder == heldBy[s.TaskID] {
			continue
		}
		was := s.Status
		// Fenced by the session's own token (store.CheckGrant): once its
		// task was granted anew, an end at this start-up's now could lie
		// after the newer session's start; the requeue that queued the
		// task for that grant ended it.
		s.Status, s.EndedAt, s.Fence = store.SessionKilled, fs.loop.now(), s.Token
		ev := fs.loop.refusal(s.TaskID, s.ID, task.ReasonLeaseOrphaned,
			fmt.Sprintf("Session %s was still recorded as %s, but no running console holds its task; it is marked killed.", short(s.ID), was))
		if err := fs.st.SessionUpdate(ctx, s, ev); errors.Is(err, store.ErrStaleToken) {
			continue
		} else if err != nil {
			return fmt.Errorf("mark session %s killed: %w", s.ID, err)
		}
		fs.hub.event(ev)
	}
	return nil
}

// checkStranded is the running check; see the comment at the top.
func (fs *fleetService) checkStranded(ctx context.Context) {
	for id, t := range fs.tasks {
		if !t.State.Live() || fs.behind(id) || fs.foreign[id] {
			continue
		}
		// Only this engine's own lease is requeued, under its own token:
		// a task another engine took over meanwhile is that engine's,
		// and requeueing it under the token read from the store would
		// kill its live agent.
		l, err := fs.st.LeaseGet(ctx, id)
		if err != nil {
			continue
		}
		if l.Holder != fs.holder {
			if fs.fleet.shared {
				fs.foreign[id] = true
			}
			continue
		}
		fs.requeueStranded(ctx, id, l.Token)
	}
}

// behind reports whether something of this engine's stands behind task
// id: a run (a session launching, running or stopping), a verify gate or
// its push, or a move held through an outage.
func (fs *fleetService) behind(id task.ID) bool {
	return fs.runs[id] != nil || fs.gating[id] != nil || fs.moving(id)
}

// checkOwnLeases is the running check over the store's leases rather than
// this engine's view of its tasks: a lease the store says this engine
// holds, with nothing of this engine's behind it, is requeued as a
// stranded one. The view can be wrong about whose a task is: a claim
// whose commit landed but whose answer was lost (a connection reset
// during COMMIT) leased the task to this engine unseen, its task.leased
// then read back from the ledger as another engine's write, so the task
// was taken for one another engine runs and checkStranded passed over it,
// while every other engine's rescue saw its holder alive: the fault run's
// task stayed leased for good. leases is the store's list, read by the
// tick's rescue.
func (fs *fleetService) checkOwnLeases(ctx context.Context, leases []lease.Lease) {
	for _, l := range leases {
		if l.Holder != fs.holder || fs.behind(l.TaskID) || fs.strandTried[l.TaskID] == l.Token {
			continue
		}
		t, err := fs.st.TaskGet(ctx, l.TaskID)
		if err != nil {
			continue
		}
		fs.tasks[t.ID] = t
		if !t.State.Live() {
			continue
		}
		delete(fs.foreign, t.ID)
		delete(fs.fleet.heldOn, t.ID)
		fs.requeueStranded(ctx, t.ID, l.Token)
	}
}

// checkOwnRuns is checkOwnLeases the other way round, over the same list:
// a run of this engine's (a session launching or at work) whose lease the
// store no longer lists under its token has lost its task, and its task is
// read again, which stops the session (rereadTask). The change notice that
// tells of a takeover can be lost (a notice sent while the listener
// reconnected, a reread that failed in an outage), and with it the only
// other way the loop learns of it before the run's next fenced write,
// which for an agent at work can be a renewal many minutes away: in the
// fault run an agent worked on for three seconds after another engine had
// requeued its task. A run whose phase finished, or that is stopping, is
// left to its gate or its stop.
func (fs *fleetService) checkOwnRuns(ctx context.Context, leases []lease.Lease) {
	held := make(map[task.ID]int64, len(fs.runs))
	for _, l := range leases {
		if l.Holder == fs.holder {
			held[l.TaskID] = l.Token
		}
	}
	for id, r := range fs.runs {
		if r.stopping || r.finishing || held[id] == r.token {
			continue
		}
		fs.rereadTask(ctx, id)
	}
}

// requeueStranded requeues task id, which this engine holds under token
// with nothing behind it, not charged, once per token.
func (fs *fleetService) requeueStranded(ctx context.Context, id task.ID, token int64) {
	if fs.strandTried[id] == token {
		return
	}
	fs.strandTried[id] = token
	t := fs.tasks[id]
	ev := fs.loop.event(id, "", task.EvTaskRequeued,
		fmt.Sprintf("Requeued: the task was %s with no session and no verify gate behind it.", t.State))
	ev.Reason = task.ReasonLeaseOrphaned
	if !fs.life.move(ctx, id, token, task.ActRequeue, func(n *task.Task) {
		n.Reason = string(task.ReasonLeaseOrphaned)
		if n.Attempt > 0 {
			n.Attempt-- // the console lost it, not the agent
		}
	}, ev) {
		fs.loop.record(ctx, fs.loop.refusal(id, "", task.ReasonLeaseOrphaned,
			fmt.Sprintf("Task %s is %s with nothing behind it and could not be requeued; restart the console.", id.Short(), t.State)))
	}
}
