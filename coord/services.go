package coord

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// The coordinator's services: each concern that is not the loop's own
// (the task map, the runs, the channels) is a type of its own, built here
// from New with the narrow view of the coordinator it needs, and called
// from the loop.

// newForks builds the trained-bases service (bases.go).
func newForks(c *Coordinator) *forkService {
	st, rp, budget := c.st, c.p.Repo, c.cfg.Brief.Budget
	return newForkService(&forkService{
		loop:     loopOf(c),
		st:       c.st,
		harness:  c.cfg.Harness,
		vars:     c.p.Vars,
		environ:  c.p.Environ,
		worktree: rp.WorktreeAdd,
		background: func(ctx context.Context, t task.Task, dir string) (string, error) {
			bg, _, err := renderBrief(ctx, st, rp.Rules(), budget, t, &run{phase: t.Phase, attempt: t.Attempt}, dir)
			return bg, err
		},
		task: func(id task.ID) (task.Task, bool) {
			t, ok := c.tasks[id]
			return t, ok
		},
		addUsage: c.usage.add,
		publish:  c.hub.event,
	}, c.cfg)
}

// newDisk builds the disk meter (disk.go).
func newDisk(c *Coordinator) *diskMeter {
	return &diskMeter{loop: loopOf(c), root: c.p.Repo.Root}
}

// newUsage builds the usage book (usage.go).
func newUsage(c *Coordinator) *usageBook {
	return &usageBook{
		byTask: map[task.ID]Usage{}, loop: loopOf(c), st: c.st,
		environ: c.p.Environ, prices: c.cfg.Prices,
		noteModel: c.noteModel, ended: c.budget.ended,
	}
}

// newStepDown builds the step-down watch (stepdown.go), after the fleet's
// TTL is known.
func newStepDown(c *Coordinator) *stepDown {
	return &stepDown{
		loop: loopOf(c), st: c.st, holder: c.holder,
		ttl: c.fleet.ttl, shared: c.fleet.shared,
		live: &c.live, stopped: c.stopped,
		run: func(id task.ID) *run { return c.runs[id] },
		probe: func(ctx context.Context) {
			if c.sw.outage || c.sw.path != "" {
				return // the store watch is asking it already
			}
			if _, err := c.st.EngineList(ctx); err != nil {
				c.sw.writeFailed(err)
			}
		},
		fencedOut: c.fleetSvc.fencedOut,
	}
}

// newMergeQueue builds the merge queue (mergequeue.go), after the fleet
// key is loaded.
func newMergeQueue(c *Coordinator) *mergeQueue {
	return &mergeQueue{
		loop: loopOf(c), tasks: tasksOf(c), st: c.st, repo: c.p.Repo, cfg: c.cfg,
		key: c.key, shared: c.fleet.shared,
		fault:         func() string { return c.sw.fault },
		recordVerdict: c.gate.recordVerdict,
	}
}

// newPullRequests builds the pull requests' follower (pullrequest.go).
func newPullRequests(c *Coordinator) *pullRequests {
	return &pullRequests{
		loop: loopOf(c), tasks: tasksOf(c), st: c.st, repo: c.p.Repo, cfg: c.cfg,
		verdict:        func(id task.ID) *task.Verdict { return c.verdicts[id] },
		requestChanges: c.reviews.requestChanges,
	}
}

// newPrograms builds the cache of installed programs (program.go).
func newPrograms(c *Coordinator) programs {
	return programs{now: c.now, harness: c.cfg.Harness, vars: c.p.Vars, environ: c.p.Environ, root: c.p.Repo.Root}
}

// newNotifier builds the runner of the [notify] command (notify.go).
func newNotifier(c *Coordinator) notifier {
	return notifier{
		loop: loopOf(c), argv: c.cfg.Notify.Command, dir: c.p.Repo.Root, environ: c.p.Environ,
		title: func(id task.ID) string { return c.tasks[id].Title },
	}
}

// newReviews builds the reviewer's side (review.go).
func newReviews(c *Coordinator) reviews {
	return reviews{loop: loopOf(c), tasks: tasksOf(c), st: c.st, publish: c.hub.event}
}

// newLifecycle builds the run lifecycle (lifecycle.go).
func newLifecycle(c *Coordinator) *lifecycle {
	return &lifecycle{
		loop: loopOf(c), st: c.st, cfg: c.cfg, stopGrace: c.p.StopGrace, hub: &c.hub, usage: c.usage,
		tasks: c.tasks, runs: c.runs, verdicts: c.verdicts, live: &c.live,
		holdWrite:  func(err error, again func()) bool { return holdSessionWrite(c, err, again) },
		holdMove:   func(err error, id task.ID, again func()) bool { return holdTaskMove(c, err, id, again) },
		holdBehind: func(id task.ID, again func()) bool { return holdBehindAppends(c, id, again) },
	}
}

// newLeases builds the lease service (leases.go), after the lifecycle.
func newLeases(c *Coordinator) *leaseService {
	return &leaseService{
		loop: loopOf(c), st: c.st, policy: c.policy, hub: &c.hub, life: c.life,
		tasks: c.tasks, runs: c.runs,
		resumeAtReset: func(ctx context.Context, r *run) { resumeAtReset(ctx, c, r) },
	}
}

// newGate builds a phase's end (advance.go), after the lifecycle and the
// step-down watch, and once the key is loaded.
func newGate(c *Coordinator) *gate {
	return &gate{
		loop: loopOf(c), st: c.st, cfg: c.cfg, repo: c.p.Repo, key: c.key, holder: c.holder, owner: c.owner,
		hub: &c.hub, life: c.life, sd: c.sd, sw: &c.sw,
		tasks: c.tasks, gating: c.gating, verdicts: c.verdicts, foreign: c.foreign,
		writeFailed:   c.sw.writeFailed,
		holdUntilBack: func(step func()) { holdUntilBack(c, step) },
	}
}

// newReporter builds the reports' side (report.go), after the lifecycle,
// the leases and the gate.
func newReporter(c *Coordinator) *reporter {
	return &reporter{
		loop: loopOf(c), st: c.st, cfg: c.cfg, repo: c.p.Repo, hub: &c.hub,
		life: c.life, leases: c.leases, gate: c.gate,
		holdRead:  func(err error, again func()) bool { return holdUnanswered(c, err, again) },
		fencedOut: func(ctx context.Context, r *run, token int64) { c.fleetSvc.fencedOut(ctx, r, token) },
		tasks:     c.tasks, runs: c.runs, infraRetry: &c.infraRetry,
		noteLimit: func(ctx context.Context, r *run, rep worker.Report) { noteLimit(ctx, c, r, rep) },
		limitGone: func(ctx context.Context, r *run) { limitGone(ctx, c, r) },
		limitExit: func(ctx context.Context, r *run, code int) bool { return limitExit(ctx, c, r, code) },
	}
}

// newCommands builds the operator's commands (command.go), last: it hands
// work to most of the others.
func newCommands(c *Coordinator) *commands {
	return &commands{
		loop: loopOf(c), st: c.st, cfg: c.cfg, repo: c.p.Repo, key: c.key, hub: &c.hub,
		life: c.life, leases: c.leases, usage: c.usage, mq: c.mq, pr: c.pr, reviews: &c.reviews,
		shared: c.fleet.shared,
		tasks:  c.tasks, runs: c.runs, gating: c.gating, verdicts: c.verdicts, foreign: c.foreign,
		ids: c.ids, hostOf: c.fleetSvc.hostOf, noteModel: c.noteModel,
		unparkedFromBudget: func(t task.Task) { unparkedFromBudget(c, t) },
		place:              c.placer.place,
		publish:            c.publish,
	}
}

// newFleetService builds the fleet's side (fleet.go), after the lifecycle
// and the disk meter. Decisions for a live session go to the commands,
// built last.
func newFleetService(c *Coordinator) *fleetService {
	return &fleetService{
		loop: loopOf(c), st: c.st, holder: c.holder, hub: &c.hub, life: c.life, disk: c.disk, notified: &c.notified,
		fleet: &c.fleet, tasks: c.tasks, runs: c.runs, gating: c.gating, foreign: c.foreign, strandTried: c.strandTried,
		sortedTasks: c.sortedTasks, noteModel: c.noteModel,
		deliverDecision: func(ctx context.Context, r *run, d store.Decision) (chan error, bool) {
			return c.commands.deliverDecision(ctx, r, d)
		},
		writeFailed:    c.sw.writeFailed,
		takeoverPaused: c.sw.takeoverPaused,
		moving:         func(id task.ID) bool { return c.sw.moving[id] },
	}
}

// newLauncher builds the attempts' start (place.go) with its prestart
// hooks (prestart.go), after the reporter and once the key is loaded.
func newLauncher(c *Coordinator) *launcher {
	return &launcher{
		loop: loopOf(c), p: c.p, st: c.st, cfg: c.cfg, holder: c.holder, hub: &c.hub, sd: c.sd,
		life: c.life, leases: c.leases, gate: c.gate, reporter: c.reporter, usage: c.usage,
		infraRetry: &c.infraRetry, sizes: &c.sizes, runs: c.runs, verdicts: c.verdicts,
		live: &c.live, hooks: prestartHooks(c),
		castPath: c.castPath, noteModel: c.noteModel,
		holdWrite: func(err error, again func()) bool { return holdUnanswered(c, err, again) },
		fencedOut: func(ctx context.Context, r *run, token int64) { c.fleetSvc.fencedOut(ctx, r, token) },
	}
}

// newPlacer builds the placement (place.go), after the launcher.
func newPlacer(c *Coordinator) *placer {
	return &placer{
		loop: loopOf(c), st: c.st, cfg: c.cfg, holder: c.holder, policy: c.policy, key: c.key, hub: &c.hub,
		sd: c.sd, life: c.life, launcher: c.launcher, fleet: &c.fleet, usage: c.usage, budget: &c.budget,
		programs: &c.programs, infraRetry: &c.infraRetry, slots: c.slots,
		tasks: c.tasks, runs: c.runs, flags: c.flags, foreign: c.foreign,
		ids:            c.ids,
		fault:          func() string { return c.sw.fault },
		rereadTask:     c.fleetSvc.rereadTask,
		holdUnanswered: func(err error, again func()) bool { return holdUnanswered(c, err, again) },
		dayCheck:       func(ctx context.Context) bool { return dayCheck(ctx, c) },
		parkForBudget: func(ctx context.Context, t task.Task, u Usage) bool {
			return parkForBudget(ctx, c, t, nil, u)
		},
		limitedQueued: func(t task.Task) string { return limitedQueued(c, t) },
	}
}

// newAdopter builds the start-up's taking up (adopt.go), after the placer
// and the fleet's side.
func newAdopter(c *Coordinator) *adopter {
	return &adopter{
		loop: loopOf(c), p: c.p, st: c.st, cfg: c.cfg, holder: c.holder, owner: c.owner, hub: &c.hub, sd: c.sd,
		usage: c.usage, sizes: &c.sizes, placer: c.placer, fleet: &c.fleet, fleetSvc: c.fleetSvc, slots: c.slots,
		tasks: c.tasks, runs: c.runs, foreign: c.foreign,
		live: &c.live, started: &c.started, reports: c.reports, stopped: c.stopped,
		castPath: c.castPath, sortedTasks: c.sortedTasks,
	}
}

// prestartHooks are an attempt's steps before its session runs, in order:
// the task's signature, the fetch of its branch, its worktree, the
// baseline verify, the brief, the session's start.
func prestartHooks(c *Coordinator) []prestartHook {
	return []prestartHook{
		signatureHook{key: c.key},
		fetchHook{repo: c.p.Repo, remote: c.cfg.Fleet.Remote},
		worktreeHook{repo: c.p.Repo},
		baselineHook{timeout: c.cfg.Verify.Timeout.Duration, owner: c.owner},
		briefHook{st: c.st, repo: c.p.Repo, budget: c.cfg.Brief.Budget},
		&startHook{
			start: c.p.Start, sizes: &c.sizes, cfg: c.cfg, owner: c.owner, environ: c.p.Environ,
			sampleEvery: c.p.SampleEvery, settle: c.p.Settle, now: c.now,
			reports: c.reports, stopped: c.stopped, started: &c.started,
		},
	}
}
