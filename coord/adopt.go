package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
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

// adopter takes up at start-up what a predecessor left: the leases of
// holders that are gone (reconcile, which requeues them through the
// fleet's side), the sessions a session host kept running (adopt), and at
// a stop the agents left running in their hosts (leaveRunning).
type adopter struct {
	loop     loopView
	p        Params
	st       store.Store
	cfg      config.Config
	holder   string
	owner    string
	hub      *hub
	sd       *stepDown // trusts a session's host once taken up (trustLaunched)
	usage    *usageBook
	sizes    *paneSizes
	placer   *placer
	fleet    *fleetState
	fleetSvc *fleetService
	slots    []*slot
	tasks    map[task.ID]task.Task
	runs     map[task.ID]*run
	foreign  map[task.ID]bool
	// live and started are the coordinator's handles for other
	// goroutines and for shutdown; reports and stopped are the channels
	// the workers report on and stop by.
	live    *sync.Map
	started *sync.Map
	reports chan worker.Report
	stopped chan struct{}
	// castPath is where a session's recording goes; sortedTasks are the
	// tasks in creation order.
	castPath    func(task.ID, string) string
	sortedTasks func() []task.Task
}

// adopt takes up t's session from a lease whose holder is gone, when a
// host still serves it. Only a session that was confirmed and briefed is
// taken up: one its engine died launching is stopped and its task
// requeued, as before, at no cost to the task. It runs in reconcile,
// before the loop, and reports whether t is this coordinator's now.
func (ad *adopter) adopt(ctx context.Context, t task.Task, l lease.Lease) bool {
	if ad.p.Hosts == nil || t.State != task.StateRunning {
		return false
	}
	ss, err := ad.st.SessionList(ctx, t.ID)
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
	sl, _ := ad.placer.slotFor(t)
	if sl == nil {
		for _, x := range ad.slots {
			if x.Harness == h {
				sl = x
				break
			}
		}
	}
	spec, ok := ad.cfg.Harness[h]
	if sl == nil || !ok {
		return false
	}
	vars := map[string]string{"model": t.Model}
	for k, v := range ad.p.Vars {
		vars[k] = v
	}
	r := &run{
		taskID: t.ID, sessionID: s.ID, token: l.Token, phase: t.Phase, attempt: t.Attempt, slot: sl,
		spec: spec.Expand(vars), dir: filepath.Join(ad.p.Repo.Root, filepath.FromSlash(repo.WorktreesDir), string(t.ID)),
		base: t.BaseCommit, lease: l, started: s.StartedAt, confirmed: true, briefed: true, brief: s.Brief,
	}
	cols, rows := ad.sizes.start(t.ID, [2]int{ad.cfg.Pane.Cols, ad.cfg.Pane.Rows})
	w, exit, err := ad.p.Hosts.Adopt(ctx, s, worker.Params{
		TaskID: t.ID, SessionID: s.ID, Token: l.Token, Owner: ad.owner, Phase: t.Phase, Spec: r.spec,
		Dir: r.dir, Base: t.BaseCommit, Cols: cols, Rows: rows, History: ad.cfg.Pane.History,
		CastPath: ad.castPath(t.ID, s.ID), RecordMax: ad.cfg.Limits.RecordingBytes, Environ: ad.p.Environ,
		SampleEvery: ad.p.SampleEvery, StuckAfter: ad.cfg.Stuck.After.Duration, Settle: ad.p.Settle,
		Changed: repo.Changed, Now: ad.loop.now, Reports: ad.reports, Gone: ad.stopped,
	})
	if err != nil {
		ad.loop.record(ctx, ad.loop.refusal(t.ID, s.ID, task.ReasonLeaseOrphaned,
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
	ev := ad.loop.event(t.ID, s.ID, task.EvSessionAdopted, text)
	ev.Data, _ = json.Marshal(data)
	l.Holder = ad.holder
	if err := renewLease(ctx, ad.st, ad.tasks, ad.loop.now(), l, ev); err != nil {
		// Someone else holds it now: let go of the session, untouched.
		_, _ = w.Detach(ad.p.StopGrace)
		ad.loop.record(ctx, ad.loop.refusal(t.ID, s.ID, task.ReasonStaleLeaseToken, "Taking up session "+short(s.ID)+": "+err.Error()))
		return false
	}
	ad.hub.event(ev)
	r.lease = l
	s.Holder, s.Fence = ad.holder, l.Token
	if err := ad.st.SessionUpdate(ctx, s); err != nil {
		ad.loop.record(ctx, ad.loop.refusal(t.ID, s.ID, task.ReasonIllegalTransition, "Session record: "+err.Error()))
	}
	r.w = w
	ad.runs[t.ID] = r
	sl.busy++
	ad.started.Store(w, struct{}{})
	go func() {
		<-w.Done()
		ad.started.Delete(w)
	}()
	r.meter = ad.usage.start(ctx, r)
	// A host its engine's death left untrusted has frozen its agent
	// (host/deadman.go). The lease is this engine's now: the agent is
	// thawed at once, before anything is typed into its pane (a decision
	// typed into a frozen agent is never seen taken, and its submit key
	// never pressed), and its host trusted again as soon as this engine
	// may trust itself (before the first beat, the first beat does).
	if !exit.Exited {
		_ = thaw(w) // SIGCONT: nothing to undo on an agent that runs
	}
	ad.sizes.goLive(ad.live, t.ID, w)
	ad.sd.trustLaunched(w)
	watchPane(ad.hub, r)
	if !exit.Exited && exit.TypedKnown && r.spec.Types() {
		ad.typeUntyped(ctx, r, exit.Typed)
	}
	if !exit.Exited && r.spec.Types() {
		// A decision recorded while no engine watched the session (a
		// forge comment read by this engine before it took the session
		// up, or by the one that died before it could type it) has no
		// delivery yet: it is typed now, once (the store keeps one
		// delivery per decision and session).
		ad.fleetSvc.deliverForeign(ctx, t.ID)
	}
	return true
}

// typeUntyped types into a session just taken up every decision whose
// delivery to it is recorded but that its host never began to type: the
// engine that recorded the delivery died before the text left its queue.
// A decision the host began is never typed again, so each reaches the
// session once.
func (ad *adopter) typeUntyped(ctx context.Context, r *run, typed []string) {
	ds, err := ad.st.DeliveryList(ctx, r.taskID)
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
	decs, err := ad.st.DecisionList(ctx, r.taskID)
	if err != nil {
		return
	}
	for _, d := range decs {
		if !owed[d.ID] {
			continue
		}
		ad.loop.record(ctx, ad.loop.event(r.taskID, r.sessionID, task.EvDecisionDelivered, fmt.Sprintf(
			"Decision typed into session %s now: the engine that recorded its delivery died before typing it.", short(r.sessionID))))
		r.w.Send(worker.Input{Kind: worker.InputDecision, ID: d.ID, Text: worker.DecisionText(d.Text)})
	}
}

// sweepHosts stops, off the loop, every session host whose session ended:
// one this coordinator did not take up, or whose exit no engine collected.
func (ad *adopter) sweepHosts() {
	if ad.p.Hosts == nil {
		return
	}
	live := map[string]bool{}
	for _, r := range ad.runs {
		live[r.sessionID] = true
	}
	ctx := context.Background()
	ad.loop.async(func() func() {
		ad.p.Hosts.Sweep(ctx, func(id string) bool {
			if live[id] {
				return true
			}
			// Reconcile and the store check have marked ended every
			// session whose holder is gone; one still recorded live is
			// this coordinator's (launched since: placement runs
			// meanwhile) or a live holder's.
			s, err := ad.st.SessionGet(ctx, id)
			return err == nil && (s.Status == store.SessionLaunching || s.Status == store.SessionConfirmed)
		})
		return nil
	})
}

// leaveRunning forgets a run whose agent was left running in its host at
// shutdown: its lease and its session stay as they are, and the next
// engine's reconcile takes it up.
func (ad *adopter) leaveRunning(ctx context.Context, r *run) {
	if ad.runs[r.taskID] == r {
		delete(ad.runs, r.taskID)
		ad.live.Delete(r.taskID)
		r.slot.busy--
	}
	if r.unsub != nil {
		r.unsub()
		r.unsub = nil
	}
	ad.loop.record(ctx, ad.loop.event(r.taskID, r.sessionID, task.EvSessionDetached,
		fmt.Sprintf("Session %s (pid %d) left running in its session host; the next engine takes it up, and the task keeps its lease and attempt.",
			short(r.sessionID), r.w.Pid())))
}

// reconcile expires leases whose holder is gone (a console that was killed)
// and requeues their tasks, once: the lease rows are deleted in the same
// step, so a second start finds nothing to do.
func (ad *adopter) reconcile(ctx context.Context) error {
	leases, err := ad.st.LeaseList(ctx)
	if err != nil {
		return fmt.Errorf("list leases: %w", err)
	}
	es, err := ad.st.EngineList(ctx)
	if err != nil {
		return fmt.Errorf("list engines: %w", err)
	}
	engines, host, now := engineIndex(es), ad.fleet.host, ad.loop.now()
	held := map[task.ID]bool{}
	for _, l := range leases {
		if ad.runs[l.TaskID] != nil {
			// Taken up by a try of this reconcile that the store cut short
			// (startretry.go).
			held[l.TaskID] = true
			continue
		}
		if l.Holder != ad.holder && holderLive(l.Holder, engines, host, ad.fleet.root, now, ad.fleet.ttl) {
			held[l.TaskID] = true
			ad.foreign[l.TaskID] = true
			ad.fleet.engines = engines
			ad.fleetSvc.noteHolder(ctx, l.TaskID, l.Holder)
			continue // another console on this repository holds it
		}
		t, ok := ad.tasks[l.TaskID]
		if !ok {
			continue
		}
		if ad.adopt(ctx, t, l) {
			held[l.TaskID] = true
			continue
		}
		if err := ad.fleetSvc.orphanWhy(ctx, t, l.Token, holderGone(l.Holder, engines, host, ad.fleet.root, now, ad.fleet.ttl)); err != nil {
			return err
		}
	}
	// A task left leased or running without a lease (a crash between two
	// writes) is requeued too.
	for _, t := range ad.sortedTasks() {
		if t.State.Live() && !held[t.ID] {
			if _, err := ad.st.LeaseGet(ctx, t.ID); errors.Is(err, store.ErrNotFound) {
				// Fenced on there being no lease row still (store.Orphan
				// of token 0): another engine may claim the task between
				// the read and the write, and its session is not ours to
				// end. The row as it is now (orphanWhy rereads it) is
				// another engine's to run.
				if err := ad.fleetSvc.orphan(ctx, t, 0, "unknown"); err != nil && !errors.Is(err, store.ErrConflict) {
					return err
				}
			}
		}
	}
	return nil
}
