package coord

import (
	"slices"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// publish stores a new snapshot for readers. It runs on the loop after every
// change; readers compute the clocks at read time.
func (c *Coordinator) publish() {
	ids := c.ids()
	c.gen++
	s := &Snapshot{At: c.now(), Gen: c.gen, Tasks: make([]TaskView, 0, len(ids)), StoreFault: c.sw.fault, SteppedDown: c.sd.text,
		Budget: budgetView(c)}
	held := dayFlag(s.Budget)
	for _, id := range ids {
		t := c.tasks[id]
		// Verdicts and usage are replaced, never changed in place, and the
		// models slice is capped at its length so a later append copies:
		// the snapshot shares them, so publishing allocates per task
		// nothing but its view.
		ms := c.models[id]
		tv := TaskView{Task: t, Flag: flagOf(c.runs[id], c.flags[id]), Gate: c.gating[id] != nil, Usage: c.usage.of(id, c.runs[id]),
			Models: ms[:len(ms):len(ms)], Verdict: c.verdicts[id], Disk: c.disk.use[id]}
		if tv.Flag == "" && t.State == task.StateQueued {
			tv.Flag = held
		}
		if c.fleet.shared {
			tv.Host = c.fleetSvc.hostOf(id)
		}
		tv.PR = c.pr.views[id]
		if r := c.runs[t.ID]; r != nil {
			tv.SessionID = r.sessionID
			tv.Stuck = r.stuck
			if r.stuck {
				tv.Flag = "stuck"
			} else if r.w != nil {
				tv.Working = workingText(r.w.Sample(), c.cfg.Stuck.After.Duration)
			}
			if r.limit != nil && !(r.limit.retrying && r.limit.guessed) {
				tv.LimitReset = r.limit.until // no countdown to a guess the CLI's retry ends
			}
			l := r.lease
			tv.Lease = &LeaseView{
				Token: l.Token, Holder: l.Holder, Deadline: l.Deadline, Renewals: l.Renewals,
				MaxRenewals: c.policy.MaxRenewals, LastDecision: l.LastDecision, LastReason: l.LastReason,
			}
			if l.LastReason != "" {
				tv.Lease.LastReasonText = l.LastReason.Sentence()
			}
			// The lease's LastProgressAt moves with every sample that differs
			// from the renewal baseline, so a pane that drew once and froze
			// would look busy; the worker knows when the pane last changed.
			tv.Lease.lastProgress = l.LastProgressAt
			if r.w != nil {
				tv.Lease.lastProgress = r.w.LastProgress()
			}
			if tv.Lease.lastProgress.IsZero() {
				tv.Lease.lastProgress = l.GrantedAt
			}
			tv.Lease.windowOpens = l.WindowOpensAt(c.policy)
		}
		s.Tasks = append(s.Tasks, tv)
	}
	for _, sl := range c.slots {
		s.Slots = append(s.Slots, SlotView{Name: sl.Name, Harness: sl.Harness, Capacity: sl.Capacity, Busy: sl.busy})
	}
	c.snap.Store(s)
	// Events of this change go out only now, so a subscriber that reads
	// the snapshot on an event sees what the event did.
	c.hub.flush()
}

// SnapshotGen returns the Gen of the latest snapshot, without copying it:
// a reader that polls (the engine's watcher, once a second per console)
// skips an unchanged snapshot of thousands of tasks for the cost of a load.
func (c *Coordinator) SnapshotGen() uint64 { return c.snap.Load().Gen }

// Snapshot returns the latest snapshot with the lease clocks computed now.
// Its Tasks are shared with every other reader when no task holds a lease
// (a store of ten thousand ended tasks is not copied per read): treat
// them as read-only.
func (c *Coordinator) Snapshot() Snapshot {
	s := *c.snap.Load()
	now := c.now()
	s.At = now
	tasks := s.Tasks
	copied := false
	for i := range tasks {
		if lv := tasks[i].Lease; lv != nil {
			if !copied {
				tasks = slices.Clone(tasks)
				copied = true
			}
			l := *lv
			l.Remaining = max(l.Deadline.Sub(now), 0)
			l.WindowOpensIn = max(l.windowOpens.Sub(now), 0)
			l.SinceProgress = max(now.Sub(l.lastProgress), 0)
			tasks[i].Lease = &l
		}
	}
	s.Tasks = tasks
	s.Bases = c.forks.views(now)
	return s
}

// Summary is the view as a list shows a task with nothing live behind it
// (no session, lease or gate): the task without its goal, acceptance,
// verify command, repository, pipeline and capabilities, the verdict
// without its output tail, the usage without its split by phase. Detail
// has all of them. An engine sends its consoles every such task in this
// form, so attaching to thousands of ended tasks carries what the list
// draws, not their whole records. A live task's view is returned whole.
func (tv TaskView) Summary() TaskView {
	if tv.SessionID != "" || tv.Lease != nil || tv.Gate {
		return tv
	}
	t := tv.Task
	tv.Task = task.Task{ID: t.ID, Title: t.Title, Harness: t.Harness, Model: t.Model, State: t.State, Phase: t.Phase,
		Attempt: t.Attempt, BaseCommit: t.BaseCommit, Branch: t.Branch, Reason: t.Reason,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if v := tv.Verdict; v != nil && v.Tail != "" {
		c := *v
		c.Tail = ""
		tv.Verdict = &c
	}
	tv.Usage.Phases = nil
	return tv
}
