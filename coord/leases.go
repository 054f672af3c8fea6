package coord

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// leaseService keeps the leases of the loop's runs: the policy's tick,
// renewals, expiry, the lease clock's start, resubmits. It ends a run
// through the lifecycle.
type leaseService struct {
	loop   loopView
	st     store.Store
	policy lease.Policy
	hub    *hub
	life   *lifecycle
	tasks  map[task.ID]task.Task
	runs   map[task.ID]*run
	// resumeAtReset ends a provider limit's wait at its reset
	// (limitwait.go).
	resumeAtReset func(context.Context, *run)
}

// tickLeases asks the pure policy about every live lease. The policy gets
// the tick's start as the renewal's start, so a slow tick never extends
// trust.
func (ls *leaseService) tickLeases(ctx context.Context) {
	started := ls.loop.now()
	for _, id := range ls.runIDs() {
		r := ls.runs[id]
		if r == nil || r.w == nil || r.finishing || r.stopping {
			continue
		}
		ls.resumeAtReset(ctx, r)
		sample := r.w.Sample()
		d := lease.Decide(r.lease, ls.policy, sample, started, ls.loop.now())
		d = holdLimitLease(r, ls.policy, d, sample, started)
		// A launch within its timeout, or one stopped at a dialog that
		// waits for the operator, holds its lease.
		launching := !r.launched.IsZero() && (r.needsYou != "" || started.Before(r.launched.Add(r.spec.LaunchLimit())))
		if d.Action == lease.ActionExpire && !r.confirmed && launching {
			d = launchingRenewal(r, ls.policy, sample, started)
		}
		switch d.Action {
		case lease.ActionRenew:
			ev := ls.loop.event(id, r.sessionID, task.EvLeaseRenewed, d.Text)
			if err := renewLease(ctx, ls.st, ls.tasks, ls.loop.now(), d.Lease, ev); err != nil {
				ls.loop.record(ctx, ls.loop.refusal(id, r.sessionID, task.ReasonStaleLeaseToken, "Renewal: "+err.Error()))
				continue
			}
			ls.hub.event(ev)
			r.lease = d.Lease
		case lease.ActionRefuse:
			changed := r.lease.LastReason != d.Reason
			r.lease = d.Lease
			if changed {
				ev := ls.loop.refusal(id, r.sessionID, d.Reason, d.Text)
				if err := renewLease(ctx, ls.st, ls.tasks, ls.loop.now(), d.Lease, ev); err == nil {
					ls.hub.event(ev)
				}
			}
		case lease.ActionExpire:
			r.lease = d.Lease
			ls.expire(ctx, r, task.ReasonLeaseExpired, d.Text)
		default:
			r.lease = d.Lease
		}
	}
}

// launchingRenewal renews the lease of a session whose launch is not yet
// confirmed and still within its harness's launch_timeout: until then the
// launch timeout bounds it, not the lease. A CLI that draws nothing until
// its prompt is ready (opencode, which shows a blank screen for tens of
// seconds on a loaded machine) shows no progress while it starts, and a
// lease shorter than its start would expire before the session could
// begin. The renewal is not counted against lease.max_renewals; the
// launch watch fails the session at its timeout.
func launchingRenewal(r *run, p lease.Policy, sample lease.Progress, started time.Time) lease.Decision {
	renewed := r.lease
	renewed.Deadline = started.Add(p.Length)
	renewed.Baseline = sample
	return lease.Decision{
		Action: lease.ActionRenew,
		Lease:  renewed,
		Text: fmt.Sprintf("Renewed while session %s launches (launch_timeout %s, started %s ago); the lease now runs until %s.",
			short(r.sessionID), r.spec.LaunchLimit(), started.Sub(r.launched).Round(time.Second), renewed.Deadline.Format(time.TimeOnly)),
	}
}

// runIDs returns the tasks with a run, in creation order: a handful, so
// sorting them costs nothing however many tasks exist.
func (ls *leaseService) runIDs() []task.ID {
	ids := make([]task.ID, 0, len(ls.runs))
	for id, r := range ls.runs {
		if r != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// expire ends r's lease: the session is stopped, continuity captured, a dead
// end recorded when the lease ran out on its own, and the task requeued (or
// failed once its attempts are used).
func (ls *leaseService) expire(ctx context.Context, r *run, reason task.Reason, text string) {
	ev := ls.loop.event(r.taskID, r.sessionID, task.EvLeaseExpired, reason.Sentence()+" "+text)
	ev.Reason = reason
	ls.loop.record(ctx, ev)
	r.addError(reason.Sentence())
	ls.life.stopThen(ctx, r, store.SessionKilled, reason.Sentence(), func() {
		if reason == task.ReasonLeaseExpired {
			ls.life.deadEnd(ctx, r, fmt.Sprintf("Attempt %d of %s made no progress and lost its lease (%s).", r.attempt, r.phase, text))
		}
		ls.life.requeue(ctx, r, reason, reason.Sentence(), reason == task.ReasonLeaseExpired)
	})
}

// resubmit re-pokes r's pane as its harness says and records that it did.
func (ls *leaseService) resubmit(ctx context.Context, r *run, by string) {
	r.resubmits++
	r.stuck = false
	mode := r.spec.Resubmit
	if mode == "" {
		mode = session.ResubmitSubmit // what a harness that names no mode gets
	}
	r.w.Send(worker.Input{Kind: worker.InputResubmit, Mode: mode})
	ls.loop.record(ctx, ls.loop.event(r.taskID, r.sessionID, task.EvResubmitted,
		fmt.Sprintf("Resubmitted session %s (%s, by %s).", short(r.sessionID), mode, by)))
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
func (ls *leaseService) rebaseLease(ctx context.Context, r *run) {
	now := ls.loop.now()
	l := r.lease
	l.Deadline = now.Add(ls.policy.Length)
	l.Baseline = r.w.Sample()
	l.LastProgressAt = now
	if err := renewLease(ctx, ls.st, ls.tasks, ls.loop.now(), l); err != nil {
		ls.loop.record(ctx, ls.loop.refusal(r.taskID, r.sessionID, task.ReasonStaleLeaseToken, "Starting the lease clock: "+err.Error()))
		return
	}
	r.lease = l
}
