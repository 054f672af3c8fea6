package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// Hosts is what the coordinator needs of sessions that outlive their
// engine (session hosts, package host). With it, a coordinator that starts
// after its predecessor died (kill -9, a crash) takes up every session that
// predecessor left running instead of requeueing its task: no attempt is
// charged, nothing is relaunched, the recording goes on in the same file,
// and the lease is decided on the next tick as if nothing had happened.
type Hosts interface {
	// Adopt takes up session s again for the run p describes. It returns
	// a nil handle and a nil error when no host serves s any more (its
	// host died with the machine): the task is then requeued as before.
	Adopt(ctx context.Context, s store.Session, p worker.Params) (worker.Handle, Adoption, error)
	// Sweep stops every session host that live does not name (a session
	// not taken up: never confirmed, or ended while its exit was still
	// waiting for an engine), with whatever of its agent still runs.
	Sweep(ctx context.Context, live func(sessionID string) bool)
}

// Adoption is what a session host said when its session was taken up:
// its pid and, when the agent ended while no engine watched, how and when
// (Exited false: it still runs).
type Adoption struct {
	HostPid int
	// Typed names the decisions the host began to type into the pane;
	// TypedKnown says it keeps them. A decision whose delivery the store
	// records but the host never began (the engine died between the two)
	// is typed by the engine that takes the session up.
	Typed      []string
	TypedKnown bool
	Exited     bool
	Code       int
	At         time.Time
}

// AdoptedData is the Data of a session.adopted event.
type AdoptedData struct {
	// Pid is the agent's process id; HostPid its session host's.
	Pid     int `json:"pid"`
	HostPid int `json:"host_pid,omitempty"`
	// ExitCode and ExitedAt are set when the agent exited while no engine
	// watched.
	ExitCode *int      `json:"exit_code,omitempty"`
	ExitedAt time.Time `json:"exited_at,omitzero"`
}

// adopt takes up t's session from a lease whose holder is gone, when a
// host still serves it. Only a session that was confirmed and briefed is
// taken up: one its engine died launching is stopped and its task
// requeued, as before, at no cost to the task. It runs in reconcile,
// before the loop, and reports whether t is this coordinator's now.
func (c *Coordinator) adopt(ctx context.Context, t task.Task, l lease.Lease) bool {
	if c.p.Hosts == nil || t.State != task.StateRunning {
		return false
	}
	ss, err := c.st.SessionList(ctx, t.ID)
	if err != nil {
		return false
	}
	var s store.Session
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].Token == l.Token && ss[i].Status == store.SessionConfirmed && ss[i].Brief != "" {
			s = ss[i]
			break
		}
	}
	if s.ID == "" {
		return false
	}
	h := harnessOf(t)
	sl, _ := c.placer.slotFor(t)
	if sl == nil {
		for _, x := range c.slots {
			if x.Harness == h {
				sl = x
				break
			}
		}
	}
	spec, ok := c.cfg.Harness[h]
	if sl == nil || !ok {
		return false
	}
	vars := map[string]string{"model": t.Model}
	for k, v := range c.p.Vars {
		vars[k] = v
	}
	r := &run{
		taskID: t.ID, sessionID: s.ID, token: l.Token, phase: t.Phase, attempt: t.Attempt, slot: sl,
		spec: spec.Expand(vars), dir: filepath.Join(c.p.Repo.Root, filepath.FromSlash(repo.WorktreesDir), string(t.ID)),
		base: t.BaseCommit, lease: l, started: s.StartedAt, confirmed: true, briefed: true, brief: s.Brief,
	}
	cols, rows := c.sizes.start(t.ID, [2]int{c.cfg.Pane.Cols, c.cfg.Pane.Rows})
	w, exit, err := c.p.Hosts.Adopt(ctx, s, worker.Params{
		TaskID: t.ID, SessionID: s.ID, Token: l.Token, Owner: c.owner, Phase: t.Phase, Spec: r.spec,
		Dir: r.dir, Base: t.BaseCommit, Cols: cols, Rows: rows, History: c.cfg.Pane.History,
		CastPath: c.castPath(t.ID, s.ID), RecordMax: c.cfg.Limits.RecordingBytes, Environ: c.p.Environ,
		SampleEvery: c.p.SampleEvery, StuckAfter: c.cfg.Stuck.After.Duration, Settle: c.p.Settle,
		Changed: repo.Changed, Now: c.now, Reports: c.reports, Gone: c.stopped,
	})
	if err != nil {
		c.record(ctx, c.refusalEvent(t.ID, s.ID, task.ReasonLeaseOrphaned,
			fmt.Sprintf("Session %s's host could not be taken up again: %v.", short(s.ID), err)))
		return false
	}
	if w == nil {
		return false
	}
	// The lease and the session are this coordinator's from now on, under
	// the same fencing token: nothing the session did is stale.
	data := AdoptedData{Pid: w.Pid(), HostPid: exit.HostPid}
	text := fmt.Sprintf("Session %s (pid %d) taken up again after %s went away; no attempt is charged, and its lease is decided on the next tick.",
		short(s.ID), w.Pid(), holderText(l.Holder))
	if exit.Exited {
		code := exit.Code
		data.ExitCode, data.ExitedAt = &code, exit.At
		text = fmt.Sprintf("Session %s taken up again after %s went away; its agent (pid %d) exited with code %d at %s while no engine watched, and what it left decides the phase.",
			short(s.ID), holderText(l.Holder), w.Pid(), code, exit.At.UTC().Format(time.RFC3339))
	}
	ev := c.event(t.ID, s.ID, task.EvSessionAdopted, text)
	ev.Data, _ = json.Marshal(data)
	l.Holder = c.holder
	if err := renewLease(ctx, c.st, c.tasks, c.now(), l, ev); err != nil {
		// Someone else holds it now: let go of the session, untouched.
		_, _ = w.Detach(c.p.StopGrace)
		c.record(ctx, c.refusalEvent(t.ID, s.ID, task.ReasonStaleLeaseToken, "Taking up session "+short(s.ID)+": "+err.Error()))
		return false
	}
	c.hub.event(ev)
	r.lease = l
	s.Holder, s.Fence = c.holder, l.Token
	if err := c.st.SessionUpdate(ctx, s); err != nil {
		c.record(ctx, c.refusalEvent(t.ID, s.ID, task.ReasonIllegalTransition, "Session record: "+err.Error()))
	}
	r.w = w
	c.runs[t.ID] = r
	sl.busy++
	c.started.Store(w, struct{}{})
	go func() {
		<-w.Done()
		c.started.Delete(w)
	}()
	r.meter = c.usage.start(ctx, r)
	c.sizes.goLive(&c.live, t.ID, w)
	watchPane(&c.hub, r)
	if !exit.Exited && exit.TypedKnown && r.spec.Types() {
		c.typeUntyped(ctx, r, exit.Typed)
	}
	if !exit.Exited && r.spec.Types() {
		// A decision recorded while no engine watched the session (a
		// forge comment read by this engine before it took the session
		// up, or by the one that died before it could type it) has no
		// delivery yet: it is typed now, once (the store keeps one
		// delivery per decision and session).
		c.fleetSvc.deliverForeign(ctx, t.ID)
	}
	return true
}

// typeUntyped types into a session just taken up every decision whose
// delivery to it is recorded but that its host never began to type: the
// engine that recorded the delivery died before the text left its queue.
// A decision the host began is never typed again, so each reaches the
// session once.
func (c *Coordinator) typeUntyped(ctx context.Context, r *run, typed []string) {
	ds, err := c.st.DeliveryList(ctx, r.taskID)
	if err != nil {
		return
	}
	begun := map[string]bool{}
	for _, k := range typed {
		begun[k] = true
	}
	owed := map[string]bool{}
	for _, d := range ds {
		if d.SessionID == r.sessionID && !begun[d.DecisionID] {
			owed[d.DecisionID] = true
		}
	}
	if len(owed) == 0 {
		return
	}
	decs, err := c.st.DecisionList(ctx, r.taskID)
	if err != nil {
		return
	}
	for _, d := range decs {
		if !owed[d.ID] {
			continue
		}
		c.record(ctx, c.event(r.taskID, r.sessionID, task.EvDecisionDelivered, fmt.Sprintf(
			"Decision typed into session %s now: the engine that recorded its delivery died before typing it.", short(r.sessionID))))
		r.w.Send(worker.Input{Kind: worker.InputDecision, ID: d.ID, Text: worker.DecisionText(d.Text)})
	}
}

// sweepHosts stops, off the loop, every session host whose session ended:
// one this coordinator did not take up, or whose exit no engine collected.
func (c *Coordinator) sweepHosts() {
	if c.p.Hosts == nil {
		return
	}
	live := map[string]bool{}
	for _, r := range c.runs {
		live[r.sessionID] = true
	}
	ctx := context.Background()
	c.async(func() func() {
		c.p.Hosts.Sweep(ctx, func(id string) bool {
			if live[id] {
				return true
			}
			// Reconcile and the store check have marked ended every
			// session whose holder is gone; one still recorded live is
			// this coordinator's (launched since: placement runs
			// meanwhile) or a live holder's.
			s, err := c.st.SessionGet(ctx, id)
			return err == nil && (s.Status == store.SessionLaunching || s.Status == store.SessionConfirmed)
		})
		return nil
	})
}

// KeepAgentsOnStop makes the coming stop leave every agent that runs in a
// session host running, its task leased and its session live, for the next
// engine to take up: an upgrade of the binary without losing a
// conversation. Agents in this process are stopped as ever.
func (c *Coordinator) KeepAgentsOnStop() { c.keepAgents.Store(true) }

// leaveRunning forgets a run whose agent was left running in its host at
// shutdown: its lease and its session stay as they are, and the next
// engine's reconcile takes it up.
func (c *Coordinator) leaveRunning(ctx context.Context, r *run) {
	if c.runs[r.taskID] == r {
		delete(c.runs, r.taskID)
		c.live.Delete(r.taskID)
		r.slot.busy--
	}
	if r.unsub != nil {
		r.unsub()
		r.unsub = nil
	}
	c.record(ctx, c.event(r.taskID, r.sessionID, task.EvSessionDetached,
		fmt.Sprintf("Session %s (pid %d) left running in its session host; the next engine takes it up, and the task keeps its lease and attempt.",
			short(r.sessionID), r.w.Pid())))
}
