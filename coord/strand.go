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
	for _, t := range c.sortedTasks() {
		holder, leased := heldBy[t.ID]
		live := t.State.Live() && leased && holder != c.holder && holderAlive(holder)
		if t.State.Live() && !live {
			// reconcile requeues these; reaching here means it could not.
			return fmt.Errorf("task %s is %s but no running console holds it; the store could not be repaired (see the refusal events)", t.ID, t.State)
		}
		ss, err := c.st.SessionList(ctx, t.ID)
		if err != nil {
			return fmt.Errorf("list sessions of %s: %w", t.ID, err)
		}
		for _, s := range ss {
			if s.Status != store.SessionLaunching && s.Status != store.SessionConfirmed {
				continue
			}
			if live && s.Holder == holder {
				continue
			}
			s.Status, s.EndedAt = store.SessionKilled, c.now()
			ev := c.refusalEvent(t.ID, s.ID, task.ReasonLeaseOrphaned,
				fmt.Sprintf("Session %s was still recorded as %s, but no running console holds its task; it is marked killed.", short(s.ID), s.Status))
			if err := c.st.SessionUpdate(ctx, s, ev); err != nil {
				return fmt.Errorf("mark session %s killed: %w", s.ID, err)
			}
			c.hub.event(ev)
		}
	}
	return nil
}

// checkStranded is the running check; see the comment at the top.
func (c *Coordinator) checkStranded(ctx context.Context) {
	for id, t := range c.tasks {
		if !t.State.Live() || c.runs[id] != nil || c.gating[id] != nil || c.foreign[id] {
			continue
		}
		token, err := c.st.TaskToken(ctx, id)
		if err != nil || c.strandTried[id] == token {
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
