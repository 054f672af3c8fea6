package coord

// publish stores a new snapshot for readers. It runs on the loop after every
// change; readers compute the clocks at read time.
func (c *Coordinator) publish() {
	ids := c.ids()
	c.gen++
	s := &Snapshot{At: c.now(), Gen: c.gen, Tasks: make([]TaskView, 0, len(ids)), StoreFault: c.sw.fault}
	for _, id := range ids {
		t := c.tasks[id]
		// Verdicts and usage are replaced, never changed in place, and the
		// models slice is capped at its length so a later append copies:
		// the snapshot shares them, so publishing allocates per task
		// nothing but its view.
		ms := c.models[id]
		tv := TaskView{Task: t, Flag: c.flags[id], Gate: c.gating[id] != nil, Usage: c.taskUsage(id),
			Models: ms[:len(ms):len(ms)], Verdict: c.verdicts[id]}
		if r := c.runs[t.ID]; r != nil {
			tv.SessionID = r.sessionID
			tv.Stuck = r.stuck
			if r.stuck {
				tv.Flag = "stuck"
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

// Snapshot returns the latest snapshot with the lease clocks computed now.
func (c *Coordinator) Snapshot() Snapshot {
	s := *c.snap.Load()
	now := c.now()
	s.At = now
	tasks := make([]TaskView, len(s.Tasks))
	copy(tasks, s.Tasks)
	for i := range tasks {
		if lv := tasks[i].Lease; lv != nil {
			l := *lv
			l.Remaining = max(l.Deadline.Sub(now), 0)
			l.WindowOpensIn = max(l.windowOpens.Sub(now), 0)
			l.SinceProgress = max(now.Sub(l.lastProgress), 0)
			tasks[i].Lease = &l
		}
	}
	s.Tasks = tasks
	s.Bases = c.baseViews(now)
	return s
}
