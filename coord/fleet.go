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

// fleetService is what sharing the store with other engines takes, on the
// loop: the ledger's reread and relay, the tasks another engine holds, the
// rescue of their leases when their engine is gone, the orphans of a
// holder that is gone, and the checks of the store's view against this
// engine's own.
type fleetService struct {
	loop     loopView
	st       store.Store
	holder   string
	hub      *hub
	life     *lifecycle
	disk     *diskMeter
	notified *notifier
	// fleet is the fleet's state, which the snapshot reads too.
	fleet       *fleetState
	tasks       map[task.ID]task.Task
	runs        map[task.ID]*run
	gating      map[task.ID]*run
	foreign     map[task.ID]bool
	strandTried map[task.ID]int64
	// sortedTasks are the tasks in creation order; noteModel remembers a
	// task's model; deliverDecision types a decision into a live session
	// (command.go); writeFailed and takeoverPaused are the store watch's
	// (storewatch.go), and moving says whether a task's move waits for
	// the store (outage.go).
	sortedTasks     func() []task.Task
	noteModel       func(task.ID, string)
	deliverDecision func(context.Context, *run, store.Decision) (chan error, bool)
	writeFailed     func(error)
	takeoverPaused  func(time.Time) bool
	moving          func(task.ID) bool
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
func (fs *fleetService) tapEvent(ev task.Event) {
	if fs.fleet.relaying {
		return
	}
	fs.disk.note(ev)
	if fs.fleet.shared && ev.ID != "" {
		fs.fleet.own[ev.ID] = struct{}{}
	}
	fs.notified.notify(ev)
}

// refreshBatch bounds one read of the ledger in refresh.
const refreshBatch = 1000

// refresh reads the ledger after the last event seen. Events other engines
// wrote are published to this engine's subscribers; the tasks they concern
// are reread from the store, and a task of ours that another engine took
// over stops its session here.
func (fs *fleetService) refresh(ctx context.Context) {
	dirty := map[task.ID]bool{}
	decided := map[task.ID]bool{}
	for {
		evs, err := fs.st.EventList(ctx, store.EventListParams{AfterSeq: fs.fleet.seen, Limit: refreshBatch})
		if err != nil {
			fs.writeFailed(err)
			return
		}
		for _, ev := range evs {
			fs.fleet.seen = max(fs.fleet.seen, ev.Seq)
			if _, mine := fs.fleet.own[ev.ID]; mine {
				delete(fs.fleet.own, ev.ID)
				continue
			}
			fs.fleet.relaying = true
			fs.hub.event(ev)
			fs.fleet.relaying = false
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
		fs.rereadTask(ctx, id)
	}
	for id := range decided {
		fs.deliverForeign(ctx, id)
	}
}

// deliverForeign types into this engine's live session of task id the
// decisions an operator recorded through another engine's console since
// the session started: a correction works from any console. The store's
// (decision, session) key keeps each to one delivery per session.
func (fs *fleetService) deliverForeign(ctx context.Context, id task.ID) {
	r := fs.runs[id]
	if r == nil || r.w == nil || !r.confirmed || r.stopping || r.finishing {
		return // the next brief has them
	}
	ds, err := fs.st.DecisionList(ctx, id)
	if err != nil {
		return
	}
	for _, d := range ds {
		if d.At.Before(r.started) || r.inBrief[d.ID] {
			continue
		}
		fs.deliverDecision(ctx, r, d)
	}
}

// rereadTask takes a task as the store has it after another engine wrote
// it. A task this engine runs keeps its loop-owned state unless the store
// shows it taken over (another lease token), when its session is stopped.
func (fs *fleetService) rereadTask(ctx context.Context, id task.ID) {
	t, err := fs.st.TaskGet(ctx, id)
	if err != nil {
		return
	}
	if r := fs.runs[id]; r != nil {
		if token, err := fs.st.TaskToken(ctx, id); err == nil && token != r.token {
			fs.fencedOut(ctx, r, token)
		} else if !t.State.Live() && !r.stopping {
			// An operator parked or cancelled the task through another
			// engine: that engine moved it and cannot stop this session.
			why := fmt.Sprintf("The task was %s through another engine; this engine's session is stopped.", t.State)
			fs.life.stopThen(ctx, r, store.SessionKilled, why, func() { fs.life.reloadTask(ctx, id) })
		}
		return
	}
	if fs.gating[id] != nil {
		return
	}
	fs.tasks[id] = t
	if t.State.Live() {
		l, err := fs.st.LeaseGet(ctx, id)
		if err == nil && l.Holder == fs.holder {
			// This engine's own lease with no run behind it (a claim
			// whose answer was lost): not another engine's task, so the
			// strand check requeues it.
			delete(fs.foreign, id)
			delete(fs.fleet.heldOn, id)
			fs.noteModel(id, t.Model)
			return
		}
		fs.foreign[id] = true // another engine runs it
		if err == nil {
			fs.noteHolder(ctx, id, l.Holder)
		}
	} else {
		delete(fs.foreign, id)
		delete(fs.fleet.heldOn, id)
	}
	fs.noteModel(id, t.Model)
}

// noteHolder records the machine of the engine that holds task id, reading
// the engines table again for an engine not seen yet.
func (fs *fleetService) noteHolder(ctx context.Context, id task.ID, holder string) {
	e, ok := fs.fleet.engines[holder]
	if !ok {
		if es, err := fs.st.EngineList(ctx); err == nil {
			fs.fleet.engines = engineIndex(es)
			e, ok = fs.fleet.engines[holder]
		}
	}
	host := holder
	if ok {
		host = e.Host
	}
	fs.fleet.heldOn[id] = host
}

// hostOf is the machine that runs task id: this one for a task it runs,
// the holder's for a task another engine runs, "" for one nobody runs.
func (fs *fleetService) hostOf(id task.ID) string {
	if fs.runs[id] != nil || fs.gating[id] != nil {
		return fs.fleet.host
	}
	if fs.foreign[id] && fs.tasks[id].State.Live() {
		return fs.fleet.heldOn[id]
	}
	return ""
}

// fencedOut stops r's session after another engine took its task over
// (the store's token is no longer r's): the task is that engine's now, so
// nothing of the task is written here; the session row is marked killed.
func (fs *fleetService) fencedOut(ctx context.Context, r *run, token int64) {
	if r.stopping {
		return
	}
	why := fmt.Sprintf("Another engine took the task over (lease token %d replaced %d); this engine's session is stopped and writes nothing more.", token, r.token)
	fs.loop.record(ctx, fs.loop.refusal(r.taskID, r.sessionID, task.ReasonStaleLeaseToken, why))
	fs.life.stopThen(ctx, r, store.SessionKilled, why, func() {
		fs.life.reloadTask(ctx, r.taskID)
		fs.foreign[r.taskID] = true
	})
}

// rescue requeues the tasks of engines that stopped beating: every lease
// whose holder is not live (another host's heartbeat older than the TTL or
// a clean stop; this host's process gone) is orphaned as reconcile does at
// start-up. A rescue another engine won first is no error.
func (fs *fleetService) rescue(ctx context.Context) {
	if fs.takeoverPaused(fs.loop.now()) {
		return
	}
	leases, err := fs.st.LeaseList(ctx)
	if err != nil {
		fs.writeFailed(err)
		return
	}
	fs.checkOwnLeases(ctx, leases)
	fs.checkOwnRuns(ctx, leases)
	var engines map[string]store.Engine
	now := fs.loop.now()
	for _, l := range leases {
		if l.Holder == fs.holder {
			continue
		}
		if engines == nil {
			es, err := fs.st.EngineList(ctx)
			if err != nil {
				fs.writeFailed(err)
				return
			}
			engines = engineIndex(es)
			fs.fleet.engines = engines
		}
		if holderLive(l.Holder, engines, fs.fleet.host, fs.fleet.root, now, fs.fleet.ttl) {
			continue
		}
		t, err := fs.st.TaskGet(ctx, l.TaskID)
		if err != nil {
			continue
		}
		fs.tasks[t.ID] = t
		why := holderGone(l.Holder, engines, fs.fleet.host, fs.fleet.root, now, fs.fleet.ttl)
		err = fs.orphanWhy(ctx, t, l.Token, why)
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrStaleToken) || errors.Is(err, store.ErrNotFound) {
			fs.life.reloadTask(ctx, t.ID) // another engine rescued it first
			continue
		}
		if err != nil {
			fs.loop.record(ctx, fs.loop.refusal(t.ID, "", task.ReasonLeaseOrphaned, "Taking over the task failed: "+err.Error()))
			continue
		}
		delete(fs.foreign, t.ID)
		delete(fs.fleet.heldOn, t.ID)
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

func (fs *fleetService) orphan(ctx context.Context, t task.Task, token int64, holder string) error {
	return fs.orphanWhy(ctx, t, token, fmt.Sprintf("The %s is gone.", holderText(holder)))
}

// orphanWhy requeues a task whose holder is gone, why saying how it was
// judged gone; its live sessions are marked killed, each with a continuity
// record that says so when it has none (a holder that died captured none).
func (fs *fleetService) orphanWhy(ctx context.Context, t task.Task, token int64, why string) error {
	if t.State.Live() {
		detail := why
		// The engine or the machine stopped, not the agent: the attempt
		// in progress is not counted (store.Orphan), so restarts never
		// fail a task.
		if t.Attempt > 0 {
			detail += fmt.Sprintf(" Attempt %d of phase %s is not counted.", t.Attempt, t.Phase)
		}
		ev := fs.loop.refusal(t.ID, "", task.ReasonLeaseOrphaned, detail)
		// The requeue ends the holder's sessions in its own transaction:
		// no engine may place the task while they still count as live.
		orphan := store.Orphan(t.ID, t.State, token, fs.loop.now(), ev)
		orphan.EndLive = &store.SessionsEnd{Status: store.SessionKilled, At: fs.loop.now(),
			Continuity: func(s store.Session) string { return lostContinuity(s, why) }}
		res, err := fs.st.TaskTransition(ctx, orphan)
		switch {
		case errors.Is(err, store.ErrConflict):
			// The row moved since this view was read: most often by this
			// start-up's own try that the store cut short after its commit
			// (startretry.go), or by another engine. Retrying the same
			// transition would fail for ever; the row as it is now is
			// what the next try acts on.
			cur, gerr := fs.st.TaskGet(ctx, t.ID)
			if gerr != nil {
				return fmt.Errorf("requeue orphaned task %s: %w", t.ID, gerr)
			}
			fs.tasks[t.ID] = cur
			return fmt.Errorf("requeue orphaned task %s: %w", t.ID, err)
		case err != nil:
			return fmt.Errorf("requeue orphaned task %s: %w", t.ID, err)
		}
		fs.tasks[t.ID] = res.Task
		fs.hub.event(ev)
		return nil
	} else if token > 0 {
		if err := fs.st.LeaseDelete(ctx, t.ID, token); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete orphaned lease of %s: %w", t.ID, err)
		}
	}
	ss, err := fs.st.SessionList(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, s := range ss {
		if s.Status == store.SessionLaunching || s.Status == store.SessionConfirmed {
			s.Status = store.SessionKilled
			s.EndedAt = fs.loop.now()
			if s.Continuity == "" {
				s.Continuity = lostContinuity(s, why)
			}
			// Fenced by the session's own token (store.CheckGrant): a
			// claim can overtake the list read, and an end written at
			// this engine's now after a newer grant could lie after the
			// newer session's start. Such a session was ended by the
			// requeue that queued its task for that grant.
			s.Fence = s.Token
			if err := fs.st.SessionUpdate(ctx, s); errors.Is(err, store.ErrStaleToken) {
				continue
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}
