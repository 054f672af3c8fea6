package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// placer leases queued tasks to free slots on the loop and hands each
// claimed task to the launcher. It reads what may hold a task back (the
// store's fault, the engine's trust in itself, budgets, provider limits,
// installed programs, the infrastructure backoff, signatures) and flags
// the tasks no slot can run.
type placer struct {
	loop     loopView
	st       store.Store
	cfg      config.Config
	holder   string
	policy   lease.Policy
	key      *signer
	hub      *hub
	sd       *stepDown
	life     *lifecycle
	launcher *launcher
	fleet    *fleetState
	usage    *usageBook
	budget   *budget
	programs *programs
	// infraRetry holds the backoff of launches that failed for the
	// machine's reasons (infra.go).
	infraRetry *infraRetry
	slots      []*slot
	tasks      map[task.ID]task.Task
	runs       map[task.ID]*run
	flags      map[task.ID]string
	foreign    map[task.ID]bool
	// ids are the tasks in creation order; fault is the store watch's
	// message while the store fails (storewatch.go); rereadTask catches
	// up with a task another engine moved (fleet.go).
	ids        func() []task.ID
	fault      func() string
	rereadTask func(context.Context, task.ID)
	// holdUnanswered holds a step until a network store that did not
	// answer does (outage.go), and reports true.
	holdUnanswered func(err error, again func()) bool
	// dayCheck and parkForBudget keep [budget] (budget.go); limitedQueued
	// flags a task whose provider shows a limit (limitwait.go).
	dayCheck      func(context.Context) bool
	parkForBudget func(context.Context, task.Task, Usage) bool
	limitedQueued func(task.Task) string
}

// place leases queued tasks to free slots, oldest first. A task no slot can
// ever run is flagged unplaceable with the reason, once, instead of being
// left silently queued. It reports whether it changed anything.
//
// Each free slot claims (store.LeaseClaim) the first still-queued task of
// those it can run: engines sharing a store may see a task queued that
// another has just taken, and the claim passes over it instead of failing.
func (pl *placer) place(ctx context.Context) (changed bool) {
	if pl.fault() != "" {
		return false // the store failed: nothing new is started on it
	}
	if !pl.sd.trusted() {
		return false // stepped down (stepdown.go): its leases may be taken
	}
	if pl.dayCheck(ctx) {
		return false // the day's budget is spent (budget.go)
	}
	var queue []task.Task
	for _, id := range pl.ids() {
		t := pl.tasks[id]
		if t.State != task.StateQueued {
			if _, ok := pl.flags[id]; ok {
				delete(pl.flags, id)
				changed = true
			}
			continue
		}
		if pl.infraRetry.waiting(t.ID, pl.loop.now()) {
			continue
		}
		if u := pl.usage.of(t.ID, pl.runs[t.ID]); pl.budget.over(t.ID, u.CostUSD) {
			// Spent in an earlier session (one whose CLI's records are
			// read as it ends): parked before it costs more.
			pl.parkForBudget(ctx, t, u)
			changed = true
			continue
		}
		if flag := pl.limitedQueued(t); flag != "" {
			if pl.flags[t.ID] != flag {
				pl.flags[t.ID] = flag
				changed = true
			}
			continue
		}
		s, why := pl.slotFor(t)
		flag, reason := why, task.ReasonUnplaceable
		if err := pl.key.check(t); err != nil {
			// Before any slot: a row edited in the store is refused by
			// every engine alike, whatever it could run.
			s, why, reason = nil, fmt.Sprintf("%v. Refused by the engine on %s.", err, pl.fleet.host), task.ReasonBadSignature
			flag = why
		}
		if why == "" {
			if why = pl.programs.programMissing(t); why != "" {
				flag = FlagProgramMissing + why + " The task starts once it is found; no attempt is counted."
				reason = task.ReasonProgramMissing
			}
		}
		if why != "" {
			if pl.flags[t.ID] != flag {
				pl.flags[t.ID] = flag
				pl.loop.record(ctx, pl.loop.refusal(t.ID, "", reason, why))
				changed = true
			}
			continue
		}
		if _, ok := pl.flags[t.ID]; ok {
			delete(pl.flags, t.ID)
			changed = true
		}
		if s == nil {
			continue // every suitable slot is busy
		}
		if t.Attempt+1 > pl.cfg.Lease.MaxAttempts {
			pl.life.fail(ctx, t, 0, task.ReasonAttemptsExhausted,
				fmt.Sprintf("Phase %s ran %d times without finishing.", t.Phase, t.Attempt))
			changed = true
			continue
		}
		queue = append(queue, t)
	}
	for len(queue) > 0 {
		s, _ := pl.slotFor(queue[0])
		if s == nil {
			queue = queue[1:]
			continue
		}
		var cands []task.ID
		for _, t := range queue {
			if len(cands) == ClaimBatch {
				break
			}
			if pl.fits(t, s) {
				cands = append(cands, t.ID)
			}
		}
		claimed, ok := pl.claim(ctx, cands, s)
		changed = true
		taken := map[task.ID]bool{}
		if ok {
			taken[claimed] = true
		} else {
			for _, id := range cands {
				taken[id] = true
			}
		}
		queue = slices.DeleteFunc(queue, func(t task.Task) bool { return taken[t.ID] })
	}
	return changed
}

// ClaimBatch is how many queued tasks one claim offers: the oldest a free
// slot can run. A batch that other engines took whole is reread and the
// next one offered, so a claim's cost stays flat however long the queue.
const ClaimBatch = 64

// fits reports whether slot s can run t: its harness, and every capability
// t needs offered by the slot or its harness.
func (pl *placer) fits(t task.Task, s *slot) bool {
	h := harnessOf(t)
	if s.Harness != h {
		return false
	}
	spec := pl.cfg.Harness[h]
	offered := map[string]bool{}
	for _, cp := range append(append([]string(nil), s.Capabilities...), spec.Capabilities...) {
		offered[cp] = true
	}
	for _, need := range t.Capabilities {
		if !offered[need] {
			return false
		}
	}
	return true
}

// slotFor returns a free slot for t, or nil and "" when suitable slots are
// all busy, or nil and a sentence when no slot can ever run t.
func (pl *placer) slotFor(t task.Task) (*slot, string) {
	h := harnessOf(t)
	if _, ok := pl.cfg.Harness[h]; !ok {
		return nil, fmt.Sprintf("Unplaceable: no harness named %q is configured.", h)
	}
	var suitable []*slot
	for _, s := range pl.slots {
		if pl.fits(t, s) {
			suitable = append(suitable, s)
		}
	}
	if len(suitable) == 0 {
		if len(t.Capabilities) > 0 {
			return nil, fmt.Sprintf("Unplaceable: no %s slot offers %s.", h, strings.Join(t.Capabilities, ", "))
		}
		return nil, fmt.Sprintf("Unplaceable: no slot runs harness %s.", h)
	}
	for _, s := range suitable {
		if s.busy < s.Capacity {
			return s, ""
		}
	}
	return nil, ""
}

// claim leases the first still-queued of cands to slot s and launches it.
// It returns the task claimed, or false when none was (another engine took
// them all; they are reread, so this view catches up at once).
func (pl *placer) claim(ctx context.Context, cands []task.ID, s *slot) (task.ID, bool) {
	now := pl.loop.now()
	var leased task.Event
	res, err := pl.st.LeaseClaim(ctx, store.Claim(cands, pl.holder, now, now.Add(pl.policy.Length),
		func(t task.Task) []task.Event {
			where := "slot " + s.Name
			if pl.fleet.shared {
				where += " on " + pl.fleet.host
			}
			leased = pl.loop.event(t.ID, "", task.EvTaskLeased,
				fmt.Sprintf("Leased to %s for phase %s, attempt %d.", where, t.Phase, t.Attempt+1))
			return []task.Event{leased}
		}))
	if errors.Is(err, store.ErrNotFound) {
		for _, id := range cands {
			pl.rereadTask(ctx, id)
		}
		return "", false
	}
	if err != nil {
		// A network store that did not answer may have committed the
		// claim all the same (its answer lost in a reset): which
		// candidate it leased is unknown. Placement pauses; once the
		// store answers every candidate is reread, and one leased to this
		// engine with no run here is stranded, requeued by the strand
		// check (strand.go) without charging its attempt.
		reread := func() {
			for _, id := range cands {
				pl.rereadTask(ctx, id)
			}
		}
		if pl.holdUnanswered(err, reread) {
			return "", false
		}
		pl.loop.record(ctx, pl.loop.refusal(cands[0], "", task.ReasonIllegalTransition, "Lease grant failed: "+err.Error()))
		pl.life.reloadTask(ctx, cands[0])
		return "", false
	}
	t := res.Task
	pl.hub.event(leased)
	delete(pl.foreign, t.ID)
	pl.tasks[t.ID] = t // as the store wrote it: another engine may have moved it since this view was read
	pl.launcher.launch(ctx, t, s, res.Lease)
	return t.ID, true
}

// launcher starts an attempt of a claimed task: the session's row, then,
// off the loop, its preparation (prepare: the prestart hooks, prestart.go),
// and back on the loop the live run (or the launch's failure). It hands the worker's first reports to
// the reporter.
type launcher struct {
	loop     loopView
	p        Params
	st       store.Store
	cfg      config.Config
	holder   string
	hub      *hub
	sd       *stepDown // trusts a new session's host (trustLaunched)
	life     *lifecycle
	leases   *leaseService
	gate     *gate
	reporter *reporter
	usage    *usageBook
	// infraRetry holds the backoff of launches that failed for the
	// machine's reasons (infra.go).
	infraRetry *infraRetry
	sizes      *paneSizes
	runs       map[task.ID]*run
	verdicts   map[task.ID]*verify.Verdict
	// live are the coordinator's handles for other goroutines (Pane,
	// Input).
	live *sync.Map
	// hooks are the steps of an attempt's preparation (prestart.go).
	hooks []prestartHook
	// castPath is where a session's recording goes; noteModel remembers a
	// task's model.
	castPath  func(task.ID, string) string
	noteModel func(task.ID, string)
	// fencedOut stops a session whose task another engine took over
	// (fleet.go).
	fencedOut func(ctx context.Context, r *run, token int64)
	// holdWrite holds a write that a network store did not answer until
	// it does, and reports true; a refusal is not held (holdUnanswered).
	holdWrite func(err error, again func()) bool
}

// launch starts the session's preparation, off the loop, for a task the
// claim just leased: the claim's one transaction moved it to leased and
// counted the attempt.
func (ln *launcher) launch(ctx context.Context, t task.Task, s *slot, l lease.Lease) {
	attempt := t.Attempt
	now := ln.loop.now()
	next := t

	h := harnessOf(t)
	vars := map[string]string{"model": t.Model}
	for k, v := range ln.p.Vars {
		vars[k] = v
	}
	spec := ln.cfg.Harness[h].Expand(vars)
	r := &run{
		taskID: t.ID, sessionID: task.NewULID(now), token: l.Token, phase: t.Phase,
		attempt: attempt, slot: s, spec: spec, base: t.BaseCommit, lease: l, started: now,
	}
	ln.runs[t.ID] = r
	s.busy++
	cast := ln.castPath(t.ID, r.sessionID)
	rel, _ := filepath.Rel(ln.p.Repo.Root, cast)
	sess := store.Session{
		ID: r.sessionID, TaskID: t.ID, Phase: t.Phase, Attempt: attempt, Harness: h, Model: t.Model,
		Token: l.Token, Holder: ln.holder, Status: store.SessionLaunching, CastPath: rel, StartedAt: now,
		Fence: l.Token,
	}
	// start prepares the worktree and starts the session, off the loop,
	// once the session's row is recorded.
	start := func() {
		ln.noteModel(t.ID, t.Model)
		needBaseline := ln.verdicts[t.ID] == nil
		ln.loop.async(func() func() {
			dir, w, baseline, err := ln.prepare(ln.loop.io(), next, r, cast, needBaseline)
			var fp launchPrint
			if err == nil {
				cols, rows := w.Size() // the launch size: not live, so not resized yet
				fp = fingerprint(ln.loop.io(), ln.st, ln.p.Environ, next, r, dir, cols, rows)
			}
			return func() {
				if baseline != nil && ln.loop.io().Err() == nil {
					ln.gate.recordVerdict(ctx, next.ID, "", next.Phase, *baseline, "Baseline before any change: ", r.token)
				}
				if ln.runs[next.ID] != r || r.stopping {
					if w != nil {
						// Off the loop, but counted, so a shutdown waits for it.
						ln.loop.async(func() func() { _ = w.Stop(ln.p.StopGrace); return nil })
					}
					return
				}
				r.dir = dir
				if err != nil {
					ln.launchFailed(ctx, r, err)
					return
				}
				r.w = w
				ln.infraRetry.clear(next.ID)
				if r.fetchNote != "" {
					ln.loop.record(ctx, ln.loop.refusal(next.ID, r.sessionID, task.ReasonFetchFailed, r.fetchNote))
				}
				r.meter = ln.usage.start(ctx, r)
				if r.meter != nil && fp.err == nil {
					// The CLI's version says whether it records every request.
					r.meter.lowerBound = unrecordedBy(r.spec, fp.launch.Version)
				}
				ln.sizes.goLive(ln.live, next.ID, w)
				ln.sd.trustLaunched(w)
				watchPane(ln.hub, r)
				r.launched = ln.loop.now()
				ln.leases.rebaseLease(ctx, r)
				ev := ln.loop.event(next.ID, r.sessionID, task.EvSessionLaunched,
					fmt.Sprintf("Session %s launched (%s, pid %d) for phase %s, attempt %d%s.",
						short(r.sessionID), h, w.Pid(), r.phase, r.attempt, fp.note()))
				ev.Data = launchedData(w)
				if !ln.gate.recordFor(ctx, r.token, ev) {
					// Another engine took the task over while the session
					// started: nothing of it is the task's, so it is stopped.
					token, _ := ln.st.TaskToken(ctx, next.ID)
					ln.fencedOut(ctx, r, token)
					return
				}
				ln.reporter.recordFingerprint(ctx, r, fp)
				early := r.early
				r.early = nil
				for _, rep := range early {
					ln.reporter.handleReport(ctx, rep)
				}
			}
		})
	}
	if err := ln.st.SessionInsert(ctx, sess); err != nil {
		// The session does not start without its row: unrecorded, it
		// would run where no other engine, rescue or check can see it. A
		// network store that does not answer holds the launch until it
		// does (outage.go), the lease kept.
		var insert func()
		insert = func() {
			if ln.runs[t.ID] != r || r.stopping {
				return
			}
			if err := ln.st.SessionInsert(ctx, sess); err != nil {
				if ln.holdWrite(err, insert) {
					return
				}
				ln.loop.record(ctx, ln.loop.refusal(t.ID, r.sessionID, task.ReasonLaunchFailed, err.Error()))
			}
			start()
		}
		if ln.holdWrite(err, insert) {
			return
		}
		ln.loop.record(ctx, ln.loop.refusal(t.ID, r.sessionID, task.ReasonLaunchFailed, err.Error()))
	}
	start()
}

// launchFailed records why a launch did not happen and requeues or fails.
func (ln *launcher) launchFailed(ctx context.Context, r *run, err error) {
	var ref *task.Refusal
	if !errors.As(err, &ref) {
		ref = &task.Refusal{Reason: task.ReasonLaunchFailed, Detail: err.Error()}
	}
	infra := infrastructure(ref)
	detail := ref.Detail
	if infra {
		detail += fmt.Sprintf(" This is the machine's failure, not the task's: no attempt is counted, and the launch is retried in %s.",
			ln.infraRetry.fail(r.taskID, ln.loop.now()))
	}
	ln.loop.record(ctx, ln.loop.refusal(r.taskID, r.sessionID, ref.Reason, detail))
	r.addError(ref.Error())
	ln.life.endRun(ctx, r, store.SessionKilled, ref.Error())
	ln.life.requeue(ctx, r, ref.Reason, ref.Error(), !infra)
}

// LaunchedData is the Data of a session.launched event: the facts a
// watchdog or a test needs to find the process.
type LaunchedData struct {
	// Pid is the agent's process id, which is also its process group id.
	Pid int `json:"pid"`
	// HostPid is its session host's, when it runs in one (package host).
	HostPid int `json:"host_pid,omitempty"`
}

// hostPider is a handle whose session runs in a session host.
type hostPider interface{ HostPid() int }

func launchedData(w worker.Handle) json.RawMessage {
	d := LaunchedData{Pid: w.Pid()}
	if h, ok := w.(hostPider); ok {
		d.HostPid = h.HostPid()
	}
	b, _ := json.Marshal(d)
	return b
}
