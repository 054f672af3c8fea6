package coord

import (
	"context"
	"fmt"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

var _ Engine = (*Coordinator)(nil)

// Subscribe returns notices of events (never dropped) and pane changes
// (coalesced).
func (c *Coordinator) Subscribe() (<-chan Notice, func()) { return c.hub.subscribe() }

// liveRun is the task's live session in live (Coordinator.live).
func liveRun(live *sync.Map, id task.ID) (worker.Handle, bool) {
	v, ok := live.Load(id)
	if !ok {
		return nil, false
	}
	return v.(worker.Handle), true
}

// Pane returns the live terminal of the task's current session.
func (c *Coordinator) Pane(id task.ID) (session.View, bool) {
	w, ok := liveRun(&c.live, id)
	if !ok {
		return nil, false
	}
	return w.View(), true
}

// Input types raw bytes into the task's live pane.
func (c *Coordinator) Input(id task.ID, b []byte) error {
	return panesOf(c).InputFor(localViewer, id, b)
}

// Detail reads the slower facts of one task from the store.
func (c *Coordinator) Detail(ctx context.Context, id task.ID, q DetailQuery) (Detail, error) {
	d, err := ReadDetail(ctx, c.st, id, q)
	if err == nil && !q.EventsOnly {
		d.LastScreen = c.screens.lastScreen(c.p.Repo.Root, d.Sessions)
	}
	return d, err
}

// ReadDetail reads a task's detail from any store, as q narrows it; `status`
// uses it without a running coordinator. With EventsOnly it reads the task
// and the new events, nothing else.
func ReadDetail(ctx context.Context, st store.Store, id task.ID, q DetailQuery) (Detail, error) {
	var d Detail
	var err error
	if d.Task, err = st.TaskGet(ctx, id); err != nil {
		return d, fmt.Errorf("task %s: %w", id, err)
	}
	if d.Events, err = st.EventList(ctx, store.EventListParams{TaskID: id, AfterSeq: q.AfterSeq}); err != nil {
		return d, err
	}
	if q.EventsOnly {
		return d, nil
	}
	if d.Verdicts, err = st.VerdictList(ctx, id); err != nil {
		return d, err
	}
	if d.Sessions, err = st.SessionList(ctx, id); err != nil {
		return d, err
	}
	if d.Decisions, err = st.DecisionList(ctx, id); err != nil {
		return d, err
	}
	for i := len(d.Sessions) - 1; i >= 0; i-- {
		if d.Sessions[i].Brief != "" {
			d.Brief = d.Sessions[i].Brief
			break
		}
	}
	return d, nil
}

// watchPane turns the session's change signal into coalesced pane notices
// of h.
func watchPane(h *hub, r *run) {
	done := make(chan struct{})
	r.unsub = func() { close(done) }
	w := r.w
	id := r.taskID
	go func() {
		for {
			select {
			case <-done:
				return
			case <-w.Done():
				h.pane(id)
				return
			case <-w.Changed():
				h.pane(id)
			}
		}
	}()
}

// NotePane tells every subscriber that the pane of task id changed though
// no session of this coordinator drew it: the engine relaying the pane of
// a session another engine holds (engine/relay.go) calls it, so consoles
// attached here redraw it as they redraw their own.
func (c *Coordinator) NotePane(id task.ID) { c.hub.pane(id) }

// Do sends an operator command to the loop and waits for its result. A
// correction to a live session returns once it has been typed into the pane.
func (c *Coordinator) Do(ctx context.Context, cmd Command) (Result, error) {
	if isForkCommand(cmd.Kind) {
		return c.ForkCommand(ctx, cmd) // the agent takes seconds: off the loop
	}
	req := cmdRequest{cmd: cmd, reply: make(chan cmdReply, 1)}
	select {
	case c.cmds <- req:
	case <-c.stopped:
		return Result{}, ErrStopped
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	var rep cmdReply
	select {
	case rep = <-req.reply:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	if rep.later != nil {
		select {
		case rep = <-rep.later:
			return rep.res, rep.err
		case <-c.stopped:
			return Result{}, fmt.Errorf("%w; a task the resume created, if any, starts on the next start", ErrStopped)
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	if rep.err != nil || rep.wait == nil {
		return rep.res, rep.err
	}
	select {
	case err := <-rep.wait:
		if err != nil {
			rep.res.Delivered = false
			rep.res.Message = "recorded, but typing into session " + short(rep.res.SessionID) +
				" failed (" + err.Error() + "); it will be in the next brief"
		}
		return rep.res, nil
	case <-ctx.Done():
		return rep.res, ctx.Err()
	}
}

// KeepAgentsOnStop makes the coming stop leave every agent that runs in a
// session host running, its task leased and its session live, for the next
// engine to take up: an upgrade of the binary without losing a
// conversation. Agents in this process are stopped as ever.
func (c *Coordinator) KeepAgentsOnStop() { c.keepAgents.Store(true) }
