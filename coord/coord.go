package coord

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// Params configures a coordinator.
type Params struct {
	Store  store.Store
	Repo   *repo.Repo
	Config config.Config
	// Holder names this console instance in leases; a lease whose holder
	// is gone is reconciled at start-up. Empty means a fresh one.
	Holder string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Environ is the console's environment, scrubbed per harness before a
	// session sees it; nil means os.Environ().
	Environ []string
	// Vars fill harness argv placeholders ({{self}}, {{script}}, ...);
	// {{model}} comes from the task.
	Vars map[string]string
	// StopGrace is how long a stopped agent gets between the polite signal
	// and the kill.
	StopGrace time.Duration
	// Settle is passed to workers (how long the state directory must be
	// quiet before the sentinel is acted on).
	Settle time.Duration
	// SampleEvery is how often workers sample progress.
	SampleEvery time.Duration
	// Control, when set, is the path of the control socket to serve.
	Control string
	// Start starts a session and returns the coordinator's handle on it;
	// nil means worker.StartInProcess. Session hosts plug in here, and
	// tests plug in fakes (worker/workertest).
	Start worker.Starter
	// Hosts, when set, takes up at start-up the sessions a predecessor
	// left running in session hosts, instead of requeueing their tasks
	// (adopt.go).
	Hosts Hosts
}

// Coordinator runs the loop. Every task-state write happens on its loop
// goroutine; slow work (worktrees, briefs, verify, stopping sessions) runs in
// goroutines whose results come back to the loop as closures.
type Coordinator struct {
	p      Params
	st     store.Store
	cfg    config.Config
	policy lease.Policy
	holder string
	// owner is the owner mark of this repository clone's engines
	// (session.OwnerMark): its sessions and gates carry it, and its
	// sweeps by mark and cgroup stop its own processes only, never those
	// of another engine of the fleet on this machine.
	owner string
	now   func() time.Time

	reports chan worker.Report
	cmds    chan cmdRequest
	back    chan func() // results of async work, applied on the loop
	wake    chan struct{}

	// Owned by the loop goroutine.
	tasks map[task.ID]task.Task
	order []task.ID // the keys of tasks in creation order (ids)
	gen   uint64    // snapshots published (Snapshot.Gen)
	runs  map[task.ID]*run
	flags map[task.ID]string
	// retry holds the backoff of tasks whose launch failed for a reason of
	// the machine's, not the task's (infra.go).
	infraRetry infraRetry
	// limits holds the harnesses whose provider showed a limit until its
	// reset (limitwait.go).
	limits limitWaits
	// programs caches whether each harness's program is installed here
	// (program.go).
	programs programs
	// sw watches the store; a failure stops placement (storewatch.go).
	sw       storeWatch
	disk     *diskMeter       // each task's disk use, measured off the loop
	gating   map[task.ID]*run // the verify gate is running for these tasks, for this run
	verdicts map[task.ID]*verify.Verdict
	usage    *usageBook // each task's usage (usage.go)
	models   map[task.ID][]string
	slots    []*slot
	// foreign are the tasks another running console held at start-up;
	// strandTried is the lease token checkStranded last requeued a task
	// under (strand.go).
	foreign     map[task.ID]bool
	strandTried map[task.ID]int64
	// fleet is what sharing the store with other engines takes (fleet.go).
	fleet fleetState
	// sd is the liveness this engine trusts in itself (stepdown.go).
	sd *stepDown
	// key signs the tasks this engine accepts and checks every task before
	// anything of it runs (signature.go).
	key *signer
	// mq is the merge queue's state (mergequeue.go).
	mq *mergeQueue
	// reviews carries out a reviewer's answers (review.go).
	reviews reviews
	// pr is the state of the open pull requests (pullrequest.go).
	pr *pullRequests
	// notified runs the notify command, holding back a repeat of the same
	// news about the same session (notify.go).
	notified notifier
	// budget enforces [budget] (budget.go).
	budget budget

	// inflight counts async work not yet handed back; idle is signalled
	// when it drops to zero, so shutdown can apply every result.
	inflight atomic.Int64
	idle     chan struct{}

	snap atomic.Pointer[Snapshot]
	// forks is the trained-bases service: the registry, the bases the
	// snapshot shows, keep-warm (bases.go).
	forks *forkService
	// life moves tasks and ends runs (lifecycle.go).
	life *lifecycle
	// leases keeps the runs' leases (leases.go).
	leases *leaseService
	// gate ends a phase: verify, verdicts, push, advance (advance.go).
	gate *gate
	// reporter takes the workers' reports (report.go).
	reporter *reporter
	// commands carries out the operator's commands (command.go).
	commands *commands
	// fleetSvc is what sharing the store with other engines takes (fleet.go).
	fleetSvc *fleetService
	// placer leases queued tasks to slots; launcher starts their attempts
	// (place.go).
	placer   *placer
	launcher *launcher
	// adopter takes up what a predecessor left (adopt.go).
	adopter *adopter
	// screens are the last screens of ended sessions, replayed from their
	// recordings for Detail (lastscreen.go).
	screens lastScreens

	live  sync.Map // task.ID -> worker.Handle, for Pane and Input from other goroutines
	sizes paneSizes
	// started holds every worker started and not yet stopped by us, from
	// the moment its start returns, so shutdown stops each agent it
	// launched even when the result of that launch was never applied.
	started sync.Map // worker.Handle -> struct{}
	hub     hub

	running atomic.Bool
	// keepAgents makes the stop leave agents in session hosts running
	// (KeepAgentsOnStop).
	keepAgents atomic.Bool
	stopped    chan struct{}
	// loaded closes once Run has loaded the store and published the first
	// snapshot: a console that reads the snapshot before then sees no
	// tasks, and nothing else would tell it to look again.
	loaded chan struct{}
	// io is Run's context: cancelled at shutdown, it aborts preparations
	// and verify runs. The loop's writes use a context without it.
	io context.Context
}

// New builds a coordinator. Call Run to start it.
func New(p Params) (*Coordinator, error) {
	if p.Store == nil || p.Repo == nil {
		return nil, errors.New("coordinator needs a store and a repository")
	}
	if p.Now == nil {
		p.Now = wallClock
	}
	if p.Environ == nil {
		p.Environ = os.Environ()
	}
	if p.Start == nil {
		p.Start = worker.StartInProcess
	}
	if p.StopGrace <= 0 {
		p.StopGrace = 2 * time.Second
	}
	if p.Holder == "" {
		p.Holder = newHolder(task.NewULID(p.Now()))
	}
	cfg := p.Config
	if cfg.Harness == nil {
		cfg = config.Default()
	}
	c := &Coordinator{
		p: p, st: p.Store, cfg: cfg, policy: cfg.Policy(), holder: p.Holder, owner: repoOwner(p.Repo), now: p.Now,
		reports:     make(chan worker.Report, 64),
		cmds:        make(chan cmdRequest),
		back:        make(chan func(), 64),
		wake:        make(chan struct{}, 1),
		idle:        make(chan struct{}, 1),
		tasks:       map[task.ID]task.Task{},
		runs:        map[task.ID]*run{},
		flags:       map[task.ID]string{},
		gating:      map[task.ID]*run{},
		verdicts:    map[task.ID]*verify.Verdict{},
		models:      map[task.ID][]string{},
		foreign:     map[task.ID]bool{},
		stopped:     make(chan struct{}),
		strandTried: map[task.ID]int64{},
		loaded:      make(chan struct{}),
	}
	for _, s := range cfg.EffectiveSlots() {
		c.slots = append(c.slots, &slot{Slot: s})
	}
	c.budget = newBudget(cfg.Budget.Task.USD(), cfg.Budget.Day.USD(), nil)
	c.snap.Store(&Snapshot{})
	c.fleet = fleetState{host: hostname(cfg.Fleet.Host), ttl: cfg.Fleet.TTL.Duration, shared: isShared(p.Store),
		own: map[string]struct{}{}, heldOn: map[task.ID]string{}}
	if p.Repo != nil {
		c.fleet.root = p.Repo.Root
	}
	if c.fleet.ttl <= 0 {
		c.fleet.ttl = EngineTTL
	}
	c.sw = storeWatch{loop: loopOf(c), st: c.st, hub: &c.hub, ttl: c.fleet.ttl,
		// A held write refused as stale: the task is read again, and a
		// session of it this engine still runs is stopped (fleet.go).
		stale: func(ctx context.Context, id task.ID) { c.fleetSvc.rereadTask(ctx, id) }}
	c.hub.seqs = func(ids []string) map[string]int64 {
		if c.sw.outage {
			return nil // not in the ledger yet: held until the store answers
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		m, err := c.st.EventSeqs(ctx, ids)
		if err != nil {
			return nil // the events go out with Seq 0, as before; the ledger has them
		}
		return m
	}
	c.usage = newUsage(c)
	c.life = newLifecycle(c)
	c.leases = newLeases(c)
	c.forks = newForks(c)
	c.disk = newDisk(c)
	c.fleetSvc = newFleetService(c)
	c.hub.tap = c.fleetSvc.tapEvent
	c.sd = newStepDown(c)
	key, err := loadSigner(cfg.Fleet.Key)
	if err != nil {
		return nil, err
	}
	c.key = key
	c.gate = newGate(c)
	c.reporter = newReporter(c)
	c.launcher = newLauncher(c)
	c.placer = newPlacer(c)
	c.adopter = newAdopter(c)
	c.mq = newMergeQueue(c)
	c.reviews = newReviews(c)
	c.pr = newPullRequests(c)
	c.programs = newPrograms(c)
	c.notified = newNotifier(c)
	c.commands = newCommands(c)
	return c, nil
}

// Holder returns this instance's lease holder name.
func (c *Coordinator) Holder() string { return c.holder }

// Run reconciles orphaned leases, then runs the loop until ctx ends. On the
// way out it stops every live session and requeues its task, so nothing is
// left looking live.
func (c *Coordinator) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("coordinator already running")
	}
	defer close(c.stopped)
	// Orchestra's state (store, worktrees, artifacts) must never show as
	// work: not in the main checkout, not in any task's worktree.
	if err := c.p.Repo.Exclude(task.StateDir + "/"); err != nil {
		return fmt.Errorf("git-ignore %s: %w", task.StateDir, err)
	}
	var changes <-chan struct{}
	retry := startRetry{shared: c.fleet.shared, tell: func(err error) {
		c.hub.event(c.refusalEvent("", "", task.ReasonStoreFailed, StoreOutageText(err)+
			" The engine starts once it answers; live sessions keep running. "+StoreOutageAdvice))
	}}
	if c.fleet.shared {
		// Listening starts before the load, and the ledger is read from
		// the newest event then: a write of another engine in between is
		// reread, never missed.
		if err := retry.do(ctx, func() error {
			ch, err := c.st.Listen(ctx)
			if err != nil {
				return fmt.Errorf("listen for other engines' writes: %w", err)
			}
			changes = ch
			return nil
		}); err != nil {
			return err
		}
		if err := retry.do(ctx, func() (err error) {
			c.fleet.seen, err = c.st.EventLastSeq(ctx)
			return err
		}); err != nil {
			return err
		}
	}
	for _, step := range []func() error{
		func() error { return c.load(ctx) },
		func() error { return loadBudgetDay(ctx, c) },
	} {
		if err := retry.do(ctx, step); err != nil {
			return err
		}
	}
	c.key.upgrade(ctx, loopOf(c), c.st, c.ids(), c.tasks)
	for _, step := range []func() error{
		func() error { return c.adopter.reconcile(ctx) },
		func() error { return c.fleetSvc.checkStore(ctx) },
	} {
		if err := retry.do(ctx, step); err != nil {
			return err
		}
	}
	c.adopter.sweepHosts()
	if err := retry.do(ctx, func() error { return c.forks.refresh(ctx) }); err != nil {
		return err
	}
	if c.p.Control != "" {
		stop, err := serveControl(ctx, c.p.Control, c.Do)
		if err != nil {
			return err
		}
		defer stop()
	}
	// Long IO (preparations, verify runs) stops with ctx; the loop's own
	// writes do not, so a cancellation in the middle of a handler can never
	// leave a task half-moved: every case taken completes, and shutdown
	// settles the rest.
	c.io = ctx
	c.sw.initStoreWatch()
	// Every task's disk use, measured once off the loop; then again only
	// when an event can have changed it.
	c.disk.want(c.ids()...)
	work := context.WithoutCancel(ctx)
	c.publish()
	close(c.loaded)
	c.startSource(ctx)
	tickEvery := c.cfg.Lease.Tick.Duration
	if tickEvery <= 0 {
		tickEvery = time.Second
	}
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	if c.fleet.shared {
		go c.sd.watchTrust(ctx)
	}
	c.placer.place(work)
	for {
		// select picks at random among ready cases, so one taken after
		// cancellation is dropped and shutdown settles every task instead.
		select {
		case <-ctx.Done():
			c.shutdown()
			return nil
		case rep := <-c.reports:
			if ctx.Err() != nil {
				c.shutdown()
				return nil
			}
			c.reporter.handleReport(work, rep)
		case req := <-c.cmds:
			if ctx.Err() != nil {
				req.reply <- cmdReply{err: ErrStopped}
				c.shutdown()
				return nil
			}
			rep := c.commands.handleCommand(work, req.cmd)
			// The reply waits for the snapshot that shows the command's
			// effect (reply is buffered), so a caller that reads the
			// snapshot when Do returns sees it.
			c.forks.tick(work)
			c.placer.place(work)
			c.mq.tick(work)
			c.pr.tick(work)
			c.publish()
			req.reply <- rep
			continue
		case f := <-c.back:
			if ctx.Err() != nil {
				c.shutdown()
				return nil
			}
			f()
		case <-c.wake:
		case _, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			c.fleetSvc.refresh(work)
		case <-tick.C:
			c.sw.watchStore(work)
			if c.sd.checkTrust(work) {
				// Stepped down: nothing is judged, renewed or placed
				// until this engine's heartbeat lands again.
				c.publish()
				continue
			}
			if c.fleet.shared {
				c.fleetSvc.rescue(work)
			}
			if c.quietTick(work) {
				continue
			}
			c.leases.tickLeases(work)
		}
		if c.sd.checkTrust(work) {
			c.publish()
			continue
		}
		resumeHeld(c, work)
		c.forks.tick(work)
		checkTaskBudgets(work, c)
		c.placer.place(work)
		c.mq.tick(work)
		c.pr.tick(work)
		c.fleetSvc.checkStranded(work)
		c.publish()
	}
}

// Done is closed when Run has returned.
func (c *Coordinator) Done() <-chan struct{} { return c.stopped }

// Loaded is closed once Run has loaded every task from the store and
// published the first snapshot, so a reader that waits on it never shows
// an empty list for a repository full of history.
func (c *Coordinator) Loaded() <-chan struct{} { return c.loaded }

// async runs f off the loop; f returns a closure that the loop applies.
func (c *Coordinator) async(f func() func()) {
	c.inflight.Add(1)
	go func() {
		defer func() {
			if c.inflight.Add(-1) == 0 {
				select {
				case c.idle <- struct{}{}:
				default:
				}
			}
		}()
		apply := f()
		if apply != nil {
			select {
			case c.back <- apply:
			case <-c.stopped:
			}
		}
	}()
}

// quietTick does a tick's work when no session runs and no gate is being
// verified, and reports whether it changed nothing. Then the snapshot
// stands (its clocks are computed when it is read) and is not published
// again, so an idle console over thousands of ended tasks costs nothing
// per tick.
func (c *Coordinator) quietTick(ctx context.Context) bool {
	if len(c.runs) > 0 || len(c.gating) > 0 || c.hub.pending() {
		return false
	}
	c.forks.tick(ctx)
	changed := c.placer.place(ctx)
	if c.mq.busy == "" && c.cfg.Finalise.Queue {
		c.mq.tick(ctx)
		changed = changed || c.mq.busy != ""
	}
	c.pr.tick(ctx)
	if changed || len(c.runs) > 0 || c.hub.pending() {
		c.publish()
	}
	return true
}

// poke wakes the loop without blocking.
func (c *Coordinator) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// load reads every task with its latest verdict and models in one query,
// and the usage sums the store keeps, so a start costs the same whatever the
// ledger's length.
func (c *Coordinator) load(ctx context.Context) error {
	// The two reads are independent: the usage sums are read meanwhile,
	// on another of the store's read connections.
	var (
		us    []store.UsageTotal
		usErr error
		read  = make(chan struct{})
	)
	go func() {
		defer close(read)
		us, usErr = c.st.UsageList(ctx)
	}()
	sums, err := c.st.TaskSummaries(ctx)
	<-read
	if err != nil {
		return fmt.Errorf("load tasks: %w", err)
	}
	for _, s := range sums {
		c.tasks[s.Task.ID] = s.Task
		if s.Verdict != nil {
			c.verdicts[s.Task.ID] = s.Verdict
		}
		for _, m := range s.Models {
			c.noteModel(s.Task.ID, m)
		}
	}
	if usErr != nil {
		return fmt.Errorf("load usage: %w", usErr)
	}
	for _, u := range us {
		if _, ok := c.tasks[u.TaskID]; ok {
			// The store keeps the session.usage events' lower-bound
			// marks with its sums: a phase is marked as its sessions
			// were, whatever the task's harness is now.
			c.usage.add(u.TaskID, u.Phase, u.Totals, u.LowerBound)
		}
	}
	return nil
}

func (c *Coordinator) noteModel(id task.ID, model string) {
	if model == "" {
		return
	}
	for _, m := range c.models[id] {
		if m == model {
			return
		}
	}
	c.models[id] = append(c.models[id], model)
}

// shutdown stops every live session, records its continuity and requeues
// its task. The worktree keeps the work; the next start relaunches with a
// continuity brief. A run still being prepared has no session yet: its
// preparation sees the cancelled context and stops whatever it started, and
// settle waits for it.
func (c *Coordinator) shutdown() {
	ctx := context.Background()
	const why = "The console stopped."
	var wg sync.WaitGroup
	conts := map[*run]*brief.Continuity{}
	var mu sync.Mutex
	kept := map[*run]bool{}
	keep := c.keepAgents.Load()
	for _, r := range c.runs {
		r.stopping = true
		if r.w == nil {
			continue
		}
		base := c.life.continuityBase(r, why)
		wg.Add(1)
		go func(r *run) {
			defer wg.Done()
			if keep {
				// Left running in its session host for the next engine,
				// which takes it up; an in-process agent is stopped.
				if k, err := r.w.Detach(c.p.StopGrace); k && err == nil {
					mu.Lock()
					kept[r] = true
					mu.Unlock()
					return
				}
			}
			cont := c.life.captureContinuity(r, base)
			mu.Lock()
			conts[r] = &cont
			r.signalled = true
			mu.Unlock()
			_ = r.w.Stop(c.p.StopGrace)
		}(r)
	}
	// A stopping worker sends its last reports (its exit among them) before
	// Stop returns. Nothing else reads them now, so drain them here: with
	// the buffer full, Stop would wait for a reader that is waiting for Stop.
	// Every run is ended below, so they carry nothing still needed.
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	for waiting := true; waiting; {
		select {
		case <-stopped:
			waiting = false
		case <-c.reports:
		}
	}
	for _, r := range c.runs {
		for _, in := range r.held {
			in.Done <- worker.ErrClosed // its Do must not wait for a brief that never comes
		}
		r.held = nil
		if kept[r] {
			c.adopter.leaveRunning(ctx, r)
			continue
		}
		code := 0
		if r.w != nil {
			code = r.w.ExitCode()
		}
		c.life.endRunWith(ctx, r, store.SessionKilled, code, conts[r], why)
		if c.tasks[r.taskID].State.Live() {
			c.life.requeue(ctx, r, task.ReasonLeaseOrphaned, "The console stopped; the task will relaunch on the next start.", false)
		}
	}
	c.settle()
	// Anything started whose launch was never applied (the loop stopped
	// first) is stopped here: no agent outlives its console.
	c.started.Range(func(k, _ any) bool {
		w := k.(worker.Handle)
		select {
		case <-w.Done():
			return true // stopped above; its entry just has not gone yet
		default:
		}
		wg.Go(func() { _ = w.Stop(c.p.StopGrace) })
		return true
	})
	wg.Wait()
	c.drainReports()
	c.hub.close()
}

// settle waits until no async work is in flight, so no preparation or stop
// is still running after Run returns. Their results are dropped: they would
// write with the cancelled context. A task whose result is dropped (one in
// its verify gate) still holds this instance's lease, which the next start
// reconciles.
func (c *Coordinator) settle() {
	for c.inflight.Load() > 0 {
		select {
		case <-c.back:
		case <-c.idle:
		case <-c.reports: // a stopping worker's exit report must not block it
		}
	}
	for len(c.back) > 0 {
		<-c.back
	}
}

func (c *Coordinator) drainReports() {
	for {
		select {
		case <-c.reports:
		default:
			return
		}
	}
}

// ids returns every task id in creation order. The order is kept, not
// rebuilt: tasks are only ever added (never removed from c.tasks), and an
// added id is put in its place by binary search, so a tick over thousands
// of ended tasks sorts nothing.
func (c *Coordinator) ids() []task.ID {
	if len(c.order) == len(c.tasks) {
		return c.order
	}
	if len(c.order) == 0 {
		// The first call, after load: one sort, not thousands of inserts.
		c.order = make([]task.ID, 0, len(c.tasks))
		for id := range c.tasks {
			c.order = append(c.order, id)
		}
		slices.Sort(c.order)
		return c.order
	}
	known := make(map[task.ID]bool, len(c.order))
	for _, id := range c.order {
		known[id] = true
	}
	for id := range c.tasks {
		if !known[id] {
			i, _ := slices.BinarySearch(c.order, id)
			c.order = slices.Insert(c.order, i, id)
		}
	}
	return c.order
}

// sortedTasks returns every task in creation order.
func (c *Coordinator) sortedTasks() []task.Task {
	ids := c.ids()
	out := make([]task.Task, len(ids))
	for i, id := range ids {
		out[i] = c.tasks[id]
	}
	return out
}

// castPath returns where a session's recording goes.
func (c *Coordinator) castPath(id task.ID, sessionID string) string {
	return filepath.Join(c.p.Repo.Root, task.StateDir, "runs", string(id), sessionID+".cast")
}

func (c *Coordinator) event(id task.ID, sessionID string, kind task.Kind, text string) task.Event {
	return task.Event{ID: task.NewULID(c.now()), TaskID: id, SessionID: sessionID, Kind: kind, Text: text, At: c.now()}
}

func (c *Coordinator) refusalEvent(id task.ID, sessionID string, reason task.Reason, detail string) task.Event {
	text := reason.Sentence()
	if detail != "" {
		text += " " + detail
	}
	ev := c.event(id, sessionID, task.EvRefusal, text)
	ev.Reason = reason
	return ev
}

// record appends events and publishes them; a store failure is itself
// reported to subscribers so it is never silent.
func (c *Coordinator) record(ctx context.Context, evs ...task.Event) {
	if c.sw.outage {
		c.sw.hold(0, evs) // appended once the store answers
		return
	}
	if err := c.st.EventAppend(ctx, evs...); err != nil {
		c.sw.writeFailed(err)
		if c.sw.outage {
			c.sw.hold(0, evs)
		}
		return
	}
	for _, ev := range evs {
		c.hub.event(ev)
	}
}
