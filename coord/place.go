package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// DefaultHarness runs a task that names none.
const DefaultHarness = "scripted"

func harnessOf(t task.Task) string {
	if t.Harness == "" {
		return DefaultHarness
	}
	return t.Harness
}

// place leases queued tasks to free slots, oldest first. A task no slot can
// ever run is flagged unplaceable with the reason, once, instead of being
// left silently queued. It reports whether it changed anything.
//
// Each free slot claims (store.LeaseClaim) the first still-queued task of
// those it can run: engines sharing a store may see a task queued that
// another has just taken, and the claim passes over it instead of failing.
func (c *Coordinator) place(ctx context.Context) (changed bool) {
	if c.sw.fault != "" {
		return false // the store failed: nothing new is started on it
	}
	if !c.sd.trusted() {
		return false // stepped down (stepdown.go): its leases may be taken
	}
	if dayCheck(ctx, c) {
		return false // the day's budget is spent (budget.go)
	}
	var queue []task.Task
	for _, id := range c.ids() {
		t := c.tasks[id]
		if t.State != task.StateQueued {
			if _, ok := c.flags[id]; ok {
				delete(c.flags, id)
				changed = true
			}
			continue
		}
		if c.infraRetry.waiting(t.ID, c.now()) {
			continue
		}
		if u := c.usage.of(t.ID, c.runs[t.ID]); c.budget.over(t.ID, u.CostUSD) {
			// Spent in an earlier session (one whose CLI's records are
			// read as it ends): parked before it costs more.
			parkForBudget(ctx, c, t, nil, u)
			changed = true
			continue
		}
		if flag := limitedQueued(c, t); flag != "" {
			if c.flags[t.ID] != flag {
				c.flags[t.ID] = flag
				changed = true
			}
			continue
		}
		s, why := c.slotFor(t)
		flag, reason := why, task.ReasonUnplaceable
		if err := c.key.check(t); err != nil {
			// Before any slot: a row edited in the store is refused by
			// every engine alike, whatever it could run.
			s, why, reason = nil, fmt.Sprintf("%v. Refused by the engine on %s.", err, c.fleet.host), task.ReasonBadSignature
			flag = why
		}
		if why == "" {
			if why = c.programs.programMissing(t); why != "" {
				flag = FlagProgramMissing + why + " The task starts once it is found; no attempt is counted."
				reason = task.ReasonProgramMissing
			}
		}
		if why != "" {
			if c.flags[t.ID] != flag {
				c.flags[t.ID] = flag
				c.record(ctx, c.refusalEvent(t.ID, "", reason, why))
				changed = true
			}
			continue
		}
		if _, ok := c.flags[t.ID]; ok {
			delete(c.flags, t.ID)
			changed = true
		}
		if s == nil {
			continue // every suitable slot is busy
		}
		if t.Attempt+1 > c.cfg.Lease.MaxAttempts {
			c.fail(ctx, t, 0, task.ReasonAttemptsExhausted,
				fmt.Sprintf("Phase %s ran %d times without finishing.", t.Phase, t.Attempt))
			changed = true
			continue
		}
		queue = append(queue, t)
	}
	for len(queue) > 0 {
		s, _ := c.slotFor(queue[0])
		if s == nil {
			queue = queue[1:]
			continue
		}
		var cands []task.ID
		for _, t := range queue {
			if len(cands) == ClaimBatch {
				break
			}
			if c.fits(t, s) {
				cands = append(cands, t.ID)
			}
		}
		claimed, ok := c.claim(ctx, cands, s)
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
func (c *Coordinator) fits(t task.Task, s *slot) bool {
	h := harnessOf(t)
	if s.Harness != h {
		return false
	}
	spec := c.cfg.Harness[h]
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
func (c *Coordinator) slotFor(t task.Task) (*slot, string) {
	h := harnessOf(t)
	if _, ok := c.cfg.Harness[h]; !ok {
		return nil, fmt.Sprintf("Unplaceable: no harness named %q is configured.", h)
	}
	var suitable []*slot
	for _, s := range c.slots {
		if c.fits(t, s) {
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
func (c *Coordinator) claim(ctx context.Context, cands []task.ID, s *slot) (task.ID, bool) {
	now := c.now()
	var leased task.Event
	res, err := c.st.LeaseClaim(ctx, store.Claim(cands, c.holder, now, now.Add(c.policy.Length),
		func(t task.Task) []task.Event {
			where := "slot " + s.Name
			if c.fleet.shared {
				where += " on " + c.fleet.host
			}
			leased = c.event(t.ID, "", task.EvTaskLeased,
				fmt.Sprintf("Leased to %s for phase %s, attempt %d.", where, t.Phase, t.Attempt+1))
			return []task.Event{leased}
		}))
	if errors.Is(err, store.ErrNotFound) {
		for _, id := range cands {
			c.rereadTask(ctx, id)
		}
		return "", false
	}
	if err != nil {
		c.record(ctx, c.refusalEvent(cands[0], "", task.ReasonIllegalTransition, "Lease grant failed: "+err.Error()))
		c.reloadTask(ctx, cands[0])
		return "", false
	}
	t := res.Task
	c.hub.event(leased)
	delete(c.foreign, t.ID)
	c.tasks[t.ID] = t // as the store wrote it: another engine may have moved it since this view was read
	c.launch(ctx, t, s, res.Lease)
	return t.ID, true
}

// launch starts the session's preparation, off the loop, for a task the
// claim just leased: the claim's one transaction moved it to leased and
// counted the attempt.
func (c *Coordinator) launch(ctx context.Context, t task.Task, s *slot, l lease.Lease) {
	attempt := t.Attempt
	now := c.now()
	next := t

	h := harnessOf(t)
	vars := map[string]string{"model": t.Model}
	for k, v := range c.p.Vars {
		vars[k] = v
	}
	spec := c.cfg.Harness[h].Expand(vars)
	r := &run{
		taskID: t.ID, sessionID: task.NewULID(now), token: l.Token, phase: t.Phase,
		attempt: attempt, slot: s, spec: spec, base: t.BaseCommit, lease: l, started: now,
	}
	c.runs[t.ID] = r
	s.busy++
	cast := c.castPath(t.ID, r.sessionID)
	rel, _ := filepath.Rel(c.p.Repo.Root, cast)
	sess := store.Session{
		ID: r.sessionID, TaskID: t.ID, Phase: t.Phase, Attempt: attempt, Harness: h, Model: t.Model,
		Token: l.Token, Holder: c.holder, Status: store.SessionLaunching, CastPath: rel, StartedAt: now,
		Fence: l.Token,
	}
	// start prepares the worktree and starts the session, off the loop,
	// once the session's row is recorded.
	start := func() {
		c.noteModel(t.ID, t.Model)
		needBaseline := c.verdicts[t.ID] == nil
		c.async(func() func() {
			dir, w, baseline, err := c.prepare(c.io, next, r, cast, needBaseline)
			var fp launchPrint
			if err == nil {
				cols, rows := w.Size() // the launch size: not live, so not resized yet
				fp = fingerprint(c.io, c.st, c.p.Environ, next, r, dir, cols, rows)
			}
			return func() {
				if baseline != nil && c.io.Err() == nil {
					c.recordVerdict(ctx, next.ID, "", next.Phase, *baseline, "Baseline before any change: ", r.token)
				}
				if c.runs[next.ID] != r || r.stopping {
					if w != nil {
						// Off the loop, but counted, so a shutdown waits for it.
						c.async(func() func() { _ = w.Stop(c.p.StopGrace); return nil })
					}
					return
				}
				r.dir = dir
				if err != nil {
					c.launchFailed(ctx, r, err)
					return
				}
				r.w = w
				c.infraRetry.clear(next.ID)
				if r.fetchNote != "" {
					c.record(ctx, c.refusalEvent(next.ID, r.sessionID, task.ReasonFetchFailed, r.fetchNote))
				}
				r.meter = c.usage.start(ctx, r)
				if r.meter != nil && fp.err == nil {
					// The CLI's version says whether it records every request.
					r.meter.lowerBound = unrecordedBy(r.spec, fp.launch.Version)
				}
				c.sizes.goLive(&c.live, next.ID, w)
				watchPane(&c.hub, r)
				r.launched = c.now()
				c.rebaseLease(ctx, r)
				ev := c.event(next.ID, r.sessionID, task.EvSessionLaunched,
					fmt.Sprintf("Session %s launched (%s, pid %d) for phase %s, attempt %d%s.",
						short(r.sessionID), h, w.Pid(), r.phase, r.attempt, fp.note()))
				ev.Data = launchedData(w)
				c.recordFingerprint(ctx, r, fp)
				c.record(ctx, ev)
				early := r.early
				r.early = nil
				for _, rep := range early {
					c.handleReport(ctx, rep)
				}
			}
		})
	}
	if err := c.st.SessionInsert(ctx, sess); err != nil {
		if storeUnreachable(c, err) {
			// The session does not start without its row: unrecorded, it
			// would run where no other engine, rescue or check can see it.
			// The launch waits for the store, holding the lease it has.
			c.writeFailed(err)
			var insert func()
			insert = func() {
				if c.runs[t.ID] != r || r.stopping {
					return
				}
				if err := c.st.SessionInsert(ctx, sess); err != nil {
					if storeUnreachable(c, err) {
						c.writeFailed(err)
						holdUntilBack(c, insert)
						return
					}
					c.record(ctx, c.refusalEvent(t.ID, r.sessionID, task.ReasonLaunchFailed, err.Error()))
				}
				start()
			}
			holdUntilBack(c, insert)
			return
		}
		c.record(ctx, c.refusalEvent(t.ID, r.sessionID, task.ReasonLaunchFailed, err.Error()))
	}
	start()
}

// storeUnreachable reports whether err, from a write, is a network
// store's failure to answer (an outage: a restart, a partition cut short
// by the call timeout) rather than the store's refusal of the write.
func storeUnreachable(c *Coordinator, err error) bool {
	return c.sw.path == "" && !errors.Is(err, store.ErrStaleToken) && !errors.Is(err, store.ErrConflict) &&
		!errors.Is(err, store.ErrNotFound)
}

// prepare runs off the loop: worktree, baseline verify, session start.
func (c *Coordinator) prepare(ctx context.Context, t task.Task, r *run, cast string, baseline bool) (string, worker.Handle, *verify.Verdict, error) {
	if err := c.key.check(t); err != nil {
		return "", nil, nil, signatureRefusal(err)
	}
	from, fetched, note, err := fetchTaskBranch(c.p.Repo, c.cfg.Fleet.Remote, t)
	if err != nil {
		return "", nil, nil, err
	}
	r.fetchNote = note // read by the loop only after this closure returns
	r.remoteSeen, r.remoteKnown = fetched, note == "" && c.cfg.Fleet.Remote != ""
	if from == "" {
		from = t.BaseCommit
	}
	dir, err := c.p.Repo.WorktreeAdd(string(t.ID), t.Branch, from)
	if err != nil {
		return "", nil, nil, &task.Refusal{Reason: task.ReasonWorktreeFailed, Detail: err.Error()}
	}
	if fetched != "" {
		// A worktree this clone kept from an earlier attempt starts from
		// what the engine that ran the task since has pushed.
		if _, err := repo.FastForward(dir, fetched); err != nil {
			return dir, nil, nil, &task.Refusal{Reason: task.ReasonWorktreeFailed, Detail: err.Error()}
		}
	}
	var v *verify.Verdict
	if baseline {
		res := verify.Run(ctx, verify.Params{Dir: dir, Command: t.Verify, Timeout: c.cfg.Verify.Timeout.Duration, Task: string(t.ID), Owner: c.owner})
		v = &res
	}
	if err := ctx.Err(); err != nil {
		return dir, nil, v, fmt.Errorf("the console is stopping: %w", err)
	}
	brief := ""
	if r.spec.Delivery == session.DeliveryArg || r.spec.Delivery == session.DeliveryFile {
		brief, _, err = renderBrief(ctx, c.st, c.p.Repo.Rules(), c.cfg.Brief.Budget, t, r, dir)
		if err != nil {
			return dir, nil, v, err
		}
	}
	cols, rows := c.sizes.start(t.ID, [2]int{c.cfg.Pane.Cols, c.cfg.Pane.Rows})
	w, err := c.p.Start(ctx, worker.Params{
		TaskID: t.ID, SessionID: r.sessionID, Token: r.token, Owner: c.owner, Phase: r.phase, Spec: r.spec,
		Dir: dir, Base: t.BaseCommit, Cols: cols, Rows: rows, History: c.cfg.Pane.History,
		CastPath: cast, RecordMax: c.cfg.Limits.RecordingBytes, Environ: c.p.Environ, Brief: brief,
		SampleEvery: c.p.SampleEvery, StuckAfter: c.cfg.Stuck.After.Duration, Settle: c.p.Settle,
		Changed: repo.Changed, Now: c.now, Reports: c.reports, Gone: c.stopped,
	})
	if err != nil {
		return dir, nil, v, err
	}
	c.started.Store(w, struct{}{})
	go func() {
		<-w.Done()
		c.started.Delete(w)
	}()
	if brief != "" {
		r.brief = brief // read by the loop only after this closure returns
	}
	return dir, w, v, nil
}

// launchFailed records why a launch did not happen and requeues or fails.
func (c *Coordinator) launchFailed(ctx context.Context, r *run, err error) {
	var ref *task.Refusal
	if !errors.As(err, &ref) {
		ref = &task.Refusal{Reason: task.ReasonLaunchFailed, Detail: err.Error()}
	}
	infra := infrastructure(ref)
	detail := ref.Detail
	if infra {
		detail += fmt.Sprintf(" This is the machine's failure, not the task's: no attempt is counted, and the launch is retried in %s.",
			c.infraRetry.fail(r.taskID, c.now()))
	}
	c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, ref.Reason, detail))
	r.addError(ref.Error())
	c.endRun(ctx, r, store.SessionKilled, ref.Error())
	c.requeue(ctx, r, ref.Reason, ref.Error(), !infra)
}

func (c *Coordinator) reloadTask(ctx context.Context, id task.ID) {
	if t, err := c.st.TaskGet(ctx, id); err == nil {
		c.tasks[id] = t
	}
}

func short(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
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

// rebaseLease starts the lease's clock and its progress baseline at the
// session's launch, again at its confirmation (confirm), and once more
// when a typed brief has been delivered (its report). The grant happened
// before the worktree was prepared and the baseline verify ran, which is
// the console's time, not the agent's: a slow verify must not eat the
// agent's lease. And the grant's baseline was empty, so the first sample
// would always count as progress; the baseline is the sample taken at
// launch instead (including the worktree an earlier attempt left), so a
// launch that never does anything gets no free renewal. The same holds for
// the brief: its echo in the pane is the console's typing, not the agent's
// work, so the baseline is taken after it (the worker stores a sample
// holding the echo before it reports the delivery), and an agent that
// never prints anything loses its lease one lease length after its brief.
func (c *Coordinator) rebaseLease(ctx context.Context, r *run) {
	now := c.now()
	l := r.lease
	l.Deadline = now.Add(c.policy.Length)
	l.Baseline = r.w.Sample()
	l.LastProgressAt = now
	if err := renewLease(ctx, c.st, c.tasks, c.now(), l); err != nil {
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, task.ReasonStaleLeaseToken, "Starting the lease clock: "+err.Error()))
		return
	}
	r.lease = l
}
