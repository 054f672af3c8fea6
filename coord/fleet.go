package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Several engines, one per machine, may share one store (PostgreSQL). Each
// runs this coordinator; they share nothing but the store:
//
//   - placement claims a queued task with store.LeaseClaim, so a task goes
//     to exactly one engine however stale the others' views are;
//   - the store's Listener wakes the loop after any engine's write, and
//     refresh rereads the ledger after the last event seen: events another
//     engine wrote are relayed to this engine's consoles, and the tasks
//     they concern are reread, so every view stays current without
//     polling;
//   - every tick, rescue looks for leases whose holder's heartbeat is older
//     than the TTL ([fleet] ttl) and requeues their tasks, with a
//     continuity record and without charging the attempt: the machine was
//     lost, not the agent. Two engines may race to rescue one task; the
//     guarded write lets one win and the other finds nothing to do;
//   - the fencing token is the store's: a task taken over has a new token,
//     so every write of the engine that lost it is refused
//     (store.ErrStaleToken), and when that engine learns of it (refresh or
//     a refused write), it stops its session without writing task state.

// fleetState is what a coordinator keeps to share its store with other
// engines. Owned by the loop.
type fleetState struct {
	// host names this machine ([fleet] host or the hostname); root is
	// the repository clone's root, as the engines table records it.
	host, root string
	// ttl is how old another machine's heartbeat may grow.
	ttl time.Duration
	// shared is set when the store is shared with other engines: only
	// then are the ledger reread and leases rescued while running.
	shared bool
	// seen is the Seq of the newest ledger event refresh has read.
	seen int64
	// own holds the ids of events this coordinator published and refresh
	// has not yet read back, so they are not relayed a second time.
	own map[string]struct{}
	// relaying is set while refresh publishes another engine's events.
	relaying bool
	// heldOn is the machine whose engine holds each task another engine
	// runs, for the snapshot's Host; engines caches the engines table.
	heldOn  map[task.ID]string
	engines map[string]store.Engine
}

// sharer is implemented by stores that other engines may write to.
type sharer interface{ Shared() bool }

func isShared(st store.Store) bool {
	s, ok := st.(sharer)
	return ok && s.Shared()
}

// tapEvent sees every event the loop publishes: it remembers this
// coordinator's own (so refresh does not relay them back) and passes it to
// the notify tap. Another engine's events are that engine's to notify.
func (c *Coordinator) tapEvent(ev task.Event) {
	if c.fleet.relaying {
		return
	}
	c.disk.note(ev)
	if c.fleet.shared && ev.ID != "" {
		c.fleet.own[ev.ID] = struct{}{}
	}
	c.notified.notify(ev)
}

// refreshBatch bounds one read of the ledger in refresh.
const refreshBatch = 1000

// refresh reads the ledger after the last event seen. Events other engines
// wrote are published to this engine's subscribers; the tasks they concern
// are reread from the store, and a task of ours that another engine took
// over stops its session here.
func (c *Coordinator) refresh(ctx context.Context) {
	dirty := map[task.ID]bool{}
	decided := map[task.ID]bool{}
	for {
		evs, err := c.st.EventList(ctx, store.EventListParams{AfterSeq: c.fleet.seen, Limit: refreshBatch})
		if err != nil {
			c.writeFailed(err)
			return
		}
		for _, ev := range evs {
			c.fleet.seen = max(c.fleet.seen, ev.Seq)
			if _, mine := c.fleet.own[ev.ID]; mine {
				delete(c.fleet.own, ev.ID)
				continue
			}
			c.fleet.relaying = true
			c.hub.event(ev)
			c.fleet.relaying = false
			if ev.TaskID != "" {
				dirty[ev.TaskID] = true
			}
			if ev.Kind == task.EvDecisionRecorded {
				decided[ev.TaskID] = true
			}
		}
		if len(evs) < refreshBatch {
			break
		}
	}
	for id := range dirty {
		c.rereadTask(ctx, id)
	}
	for id := range decided {
		c.deliverForeign(ctx, id)
	}
}

// deliverForeign types into this engine's live session of task id the
// decisions an operator recorded through another engine's console since
// the session started: a correction works from any console. The store's
// (decision, session) key keeps each to one delivery per session.
func (c *Coordinator) deliverForeign(ctx context.Context, id task.ID) {
	r := c.runs[id]
	if r == nil || r.w == nil || !r.confirmed || r.stopping || r.finishing {
		return // the next brief has them
	}
	ds, err := c.st.DecisionList(ctx, id)
	if err != nil {
		return
	}
	for _, d := range ds {
		if d.At.Before(r.started) || r.inBrief[d.ID] {
			continue
		}
		c.commands.deliverDecision(ctx, r, d)
	}
}

// rereadTask takes a task as the store has it after another engine wrote
// it. A task this engine runs keeps its loop-owned state unless the store
// shows it taken over (another lease token), when its session is stopped.
func (c *Coordinator) rereadTask(ctx context.Context, id task.ID) {
	t, err := c.st.TaskGet(ctx, id)
	if err != nil {
		return
	}
	if r := c.runs[id]; r != nil {
		if token, err := c.st.TaskToken(ctx, id); err == nil && token != r.token {
			c.fencedOut(ctx, r, token)
		} else if !t.State.Live() && !r.stopping {
			// An operator parked or cancelled the task through another
			// engine: that engine moved it and cannot stop this session.
			why := fmt.Sprintf("The task was %s through another engine; this engine's session is stopped.", t.State)
			c.life.stopThen(ctx, r, store.SessionKilled, why, func() { c.life.reloadTask(ctx, id) })
		}
		return
	}
	if c.gating[id] != nil {
		return
	}
	c.tasks[id] = t
	if t.State.Live() {
		c.foreign[id] = true // another engine runs it
		if l, err := c.st.LeaseGet(ctx, id); err == nil {
			c.noteHolder(ctx, id, l.Holder)
		}
	} else {
		delete(c.foreign, id)
		delete(c.fleet.heldOn, id)
	}
	c.noteModel(id, t.Model)
}

// noteHolder records the machine of the engine that holds task id, reading
// the engines table again for an engine not seen yet.
func (c *Coordinator) noteHolder(ctx context.Context, id task.ID, holder string) {
	e, ok := c.fleet.engines[holder]
	if !ok {
		if es, err := c.st.EngineList(ctx); err == nil {
			c.fleet.engines = engineIndex(es)
			e, ok = c.fleet.engines[holder]
		}
	}
	host := holder
	if ok {
		host = e.Host
	}
	c.fleet.heldOn[id] = host
}

// hostOf is the machine that runs task id: this one for a task it runs,
// the holder's for a task another engine runs, "" for one nobody runs.
func (c *Coordinator) hostOf(id task.ID) string {
	if c.runs[id] != nil || c.gating[id] != nil {
		return c.fleet.host
	}
	if c.foreign[id] && c.tasks[id].State.Live() {
		return c.fleet.heldOn[id]
	}
	return ""
}

// fencedOut stops r's session after another engine took its task over
// (the store's token is no longer r's): the task is that engine's now, so
// nothing of the task is written here; the session row is marked killed.
func (c *Coordinator) fencedOut(ctx context.Context, r *run, token int64) {
	if r.stopping {
		return
	}
	why := fmt.Sprintf("Another engine took the task over (lease token %d replaced %d); this engine's session is stopped and writes nothing more.", token, r.token)
	c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, task.ReasonStaleLeaseToken, why))
	c.life.stopThen(ctx, r, store.SessionKilled, why, func() {
		c.life.reloadTask(ctx, r.taskID)
		c.foreign[r.taskID] = true
	})
}

// rescue requeues the tasks of engines that stopped beating: every lease
// whose holder is not live (another host's heartbeat older than the TTL or
// a clean stop; this host's process gone) is orphaned as reconcile does at
// start-up. A rescue another engine won first is no error.
func (c *Coordinator) rescue(ctx context.Context) {
	if c.takeoverPaused(c.now()) {
		return
	}
	leases, err := c.st.LeaseList(ctx)
	if err != nil {
		c.writeFailed(err)
		return
	}
	var engines map[string]store.Engine
	now := c.now()
	for _, l := range leases {
		if l.Holder == c.holder {
			continue
		}
		if engines == nil {
			es, err := c.st.EngineList(ctx)
			if err != nil {
				c.writeFailed(err)
				return
			}
			engines = engineIndex(es)
			c.fleet.engines = engines
		}
		if holderLive(l.Holder, engines, c.fleet.host, c.fleet.root, now, c.fleet.ttl) {
			continue
		}
		t, err := c.st.TaskGet(ctx, l.TaskID)
		if err != nil {
			continue
		}
		c.tasks[t.ID] = t
		why := holderGone(l.Holder, engines, c.fleet.host, c.fleet.root, now, c.fleet.ttl)
		err = c.orphanWhy(ctx, t, l.Token, why)
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrStaleToken) || errors.Is(err, store.ErrNotFound) {
			c.life.reloadTask(ctx, t.ID) // another engine rescued it first
			continue
		}
		if err != nil {
			c.record(ctx, c.refusalEvent(t.ID, "", task.ReasonLeaseOrphaned, "Taking over the task failed: "+err.Error()))
			continue
		}
		delete(c.foreign, t.ID)
		delete(c.fleet.heldOn, t.ID)
	}
}

// lostContinuity is the continuity record of a session whose holder died
// without capturing one: what the next brief can still say about it. The
// work it committed and pushed is in the task's branch, which the next
// session's brief reads from git.
func lostContinuity(s store.Session, why string) string {
	b, err := json.Marshal(brief.Continuity{
		SessionID: s.ID, Harness: s.Harness, Model: s.Model, Attempt: s.Attempt, Phase: s.Phase,
		Ended: "Its engine was lost: " + why,
	})
	if err != nil {
		return ""
	}
	return string(b)
}

// NotePane tells every subscriber that the pane of task id changed though
// no session of this coordinator drew it: the engine relaying the pane of
// a session another engine holds (engine/relay.go) calls it, so consoles
// attached here redraw it as they redraw their own.
func (c *Coordinator) NotePane(id task.ID) { c.hub.pane(id) }
