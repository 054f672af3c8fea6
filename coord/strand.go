package coord

import (
	"context"
	"fmt"

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
func (c *Coordinator) checkStore(ctx context.Context) error {
	leases, err := c.st.LeaseList(ctx)
	if err != nil {
		return fmt.Errorf("list leases: %w", err)
	}
	heldBy := map[task.ID]string{}
	for _, l := range leases {
		heldBy[l.TaskID] = l.Holder
	}
	liveHeld := map[task.ID]bool{}
	es, err := c.st.EngineList(ctx)
	if err != nil {
		return fmt.Errorf("list engines: %w", err)
	}
	engines, now := engineIndex(es), c.now()
	for _, t := range c.sortedTasks() {
		if !t.State.Live() {
			continue
		}
		holder, leased := heldBy[t.ID]
		adopted := leased && holder == c.holder && c.runs[t.ID] != nil // taken up again (adopt.go)
		live := adopted || leased && holder != c.holder && holderLive(holder, engines, c.fleet.host, c.fleet.root, now, c.fleet.ttl)
		if !live && c.fleet.shared {
			// Another engine may have ended it since the load.
			if fresh, err := c.st.TaskGet(ctx, t.ID); err == nil && !fresh.State.Live() {
				c.tasks[t.ID] = fresh
				continue
			}
		}
		if !live {
			// reconcile requeues these; reaching here means it could not.
			return fmt.Errorf("task %s is %s but no running console holds it; the store could not be repaired (see the refusal events)", t.ID, t.State)
		}
		liveHeld[t.ID] = true
	}
	// The sessions still recorded as live, of every task: one read
	// whatever the length of the history.
	ss, err := c.st.SessionListLive(ctx)
	if err != nil {
		return fmt.Errorf("list live sessions: %w", err)
	}
	for _, s := range ss {
		if liveHeld[s.TaskID] && s.Holder == heldBy[s.TaskID] {
			continue
		}
		was := s.Status
		s.Status, s.EndedAt = store.SessionKilled, c.now()
		ev := c.refusalEvent(s.TaskID, s.ID, task.ReasonLeaseOrphaned,
			fmt.Sprintf("Session %s was still recorded as %s, but no running console holds its task; it is marked killed.", short(s.ID), was))
		if err := c.st.SessionUpdate(ctx, s, ev); err != nil {
			return fmt.Errorf("mark session %s killed: %w", s.ID, err)
		}
		c.hub.event(ev)
	}
	return nil
}

// checkStranded is the running check; see the comment at the top.
func (c *Coordinator) checkStranded(ctx context.Context) {
	for id, t := range c.tasks {
		if !t.State.Live() || c.runs[id] != nil || c.gating[id] != nil || c.foreign[id] || c.sw.moving[id] {
			continue
		}
		// Only this engine's own lease is requeued, under its own token:
		// a task another engine took over meanwhile is that engine's,
		// and requeueing it under the token read from the store would
		// kill its live agent.
		l, err := c.st.LeaseGet(ctx, id)
		if err != nil {
			continue
		}
		if l.Holder != c.holder {
			if c.fleet.shared {
				c.foreign[id] = true
			}
			continue
		}
		token := l.Token
		if c.strandTried[id] == token {
			continue
		}
		c.strandTried[id] = token
		ev := c.event(id, "", task.EvTaskRequeued,
			fmt.Sprintf("Requeued: the task was %s with no session and no verify gate behind it.", t.State))
		ev.Reason = task.ReasonLeaseOrphaned
		if !c.move(ctx, id, token, task.ActRequeue, func(n *task.Task) {
			n.Reason = string(task.ReasonLeaseOrphaned)
			if n.Attempt > 0 {
				n.Attempt-- // the console lost it, not the agent
			}
		}, ev) {
			c.record(ctx, c.refusalEvent(id, "", task.ReasonLeaseOrphaned,
				fmt.Sprintf("Task %s is %s with nothing behind it and could not be requeued; restart the console.", id.Short(), t.State)))
		}
	}
}
