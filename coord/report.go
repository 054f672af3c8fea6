package coord

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// reporter takes a worker's reports on the loop: the launch's
// confirmation and the brief, a phase's end (handed to the gate), stuck
// and limit signs, the exit. It sees the loop's tasks and runs, and ends
// runs through the lifecycle.
type reporter struct {
	loop   loopView
	st     store.Store
	cfg    config.Config
	repo   *repo.Repo
	hub    *hub
	life   *lifecycle
	leases *leaseService
	gate   *gate
	// holdRead holds a step whose read (or write: a confirm) a network
	// store did not answer until it does, and reports true (outage.go).
	holdRead func(err error, again func()) bool
	// fencedOut stops a session whose task another engine took over
	// (fleet.go).
	fencedOut func(ctx context.Context, r *run, token int64)
	tasks     map[task.ID]task.Task
	runs      map[task.ID]*run
	// infraRetry holds the backoff of launches that failed for the
	// machine's reasons (infra.go).
	infraRetry *infraRetry
	// noteLimit, limitGone and limitExit follow a provider's limit
	// (limitwait.go).
	noteLimit func(context.Context, *run, worker.Report)
	limitGone func(context.Context, *run)
	limitExit func(context.Context, *run, int) bool
	// onEarlyReport, when set (tests), is called on the loop with a report
	// that arrived before its run's launch was applied.
	onEarlyReport func(worker.Report)
}

// handleReport applies a worker's report. A report from a session that no
// longer holds the task's lease is refused and recorded: a session whose
// lease was taken away can never seal an artifact or finish a phase.
func (rp *reporter) handleReport(ctx context.Context, rep worker.Report) {
	r := rp.runs[rep.TaskID]
	if r == nil || r.sessionID != rep.SessionID || r.token != rep.Token {
		// Only a report that would write (a confirm, a seal) is a refused
		// write. The rest (stuck, unstuck, a refusal typed into its own
		// pane, an input typed, an exit) routinely reach the loop just
		// after the closure that ended their run, which the loop may pick
		// first: reporting them as refused writes would alarm for nothing.
		if rep.Kind == worker.Confirmed || rep.Kind == worker.PhaseFinished {
			rp.loop.record(ctx, rp.loop.refusal(rep.TaskID, rep.SessionID, task.ReasonStaleLeaseToken,
				fmt.Sprintf("Report %q from session %s (lease token %d) ignored.", rep.Kind, short(rep.SessionID), rep.Token)))
		}
		return
	}
	if r.stopping && rep.Kind != worker.Exited {
		return
	}
	if r.w == nil {
		// The worker reports from the moment it starts; its launch comes
		// back to the loop only after the launch fingerprint (which may
		// wait seconds on the agent's --version). Handling a Confirmed
		// now would type the brief into a run with no worker. So every
		// report waits, in order, until the launch is applied: a one-shot
		// agent can finish its phase and exit inside that window, and its
		// exit must not be taken before the phase it finished.
		r.early = append(r.early, rep)
		if rp.onEarlyReport != nil {
			rp.onEarlyReport(rep)
		}
		return
	}
	switch rep.Kind {
	case worker.Confirmed:
		if r.confirmed || r.finishing {
			return // a sealed artifact confirmed it already
		}
		rp.confirmed(ctx, r, rep)
	case worker.NeedsYou, worker.Answered:
		noteDialog(ctx, rp.loop, r, rep)
	case worker.Limited:
		rp.noteLimit(ctx, r, rep)
	case worker.LimitGone:
		rp.limitGone(ctx, r)
	case worker.LaunchRefused:
		r.stopping = true
		rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, rep.Refusal.Reason, rep.Refusal.Detail))
		r.addError(rep.Refusal.Error())
		rp.life.stopThen(ctx, r, store.SessionKilled, rep.Refusal.Error(), func() {
			rp.life.requeue(ctx, r, rep.Refusal.Reason, rep.Refusal.Error(), true)
		})
	case worker.InputDelivered:
		switch rep.Input {
		case worker.InputBrief:
			r.briefed = true
			rp.leases.rebaseLease(ctx, r)
			rp.recordBriefDelivered(ctx, r, fmt.Sprintf("Brief delivered to session %s (%d bytes).", short(r.sessionID), len(r.brief)))
		case worker.InputRefusal:
			// The refusal event was recorded when the artifact was refused.
		}
	case worker.InputRefused:
		// The bytes are in the pane, so a brief counts as delivered (the
		// stuck clock runs from it); the refusal says what the screen
		// shows, and a resubmit is the operator's next move.
		if rep.Input == worker.InputBrief {
			r.briefed = true
			rp.leases.rebaseLease(ctx, r)
		}
		r.addError(rep.Refusal.Error())
		rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, rep.Refusal.Reason,
			fmt.Sprintf("Session %s, %s: %s", short(r.sessionID), rep.Input, rep.Refusal.Detail)))
	case worker.Refused:
		r.addError(rep.Refusal.Error())
		rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, rep.Refusal.Reason,
			rep.Refusal.Detail+" The refusal was typed into the pane."))
	case worker.PhaseFinished:
		if !r.confirmed && !rp.confirmBySeal(ctx, r, rep) {
			return
		}
		rp.gate.phaseFinished(ctx, r, rep)
	case worker.Stuck:
		if r.limit != nil {
			return // it waits for its provider, not stuck
		}
		r.stuck = true
		rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, task.ReasonStuck,
			fmt.Sprintf("Session %s has shown the same screen for %s.", short(r.sessionID), rep.Idle.Round(1e9))))
		if rp.cfg.Stuck.AutoResubmit > 0 {
			if r.resubmits < rp.cfg.Stuck.AutoResubmit {
				rp.leases.resubmit(ctx, r, "auto")
			} else if r.resubmits == rp.cfg.Stuck.AutoResubmit {
				r.resubmits++
				rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, task.ReasonResubmitCap, ""))
			}
		}
	case worker.Unstuck:
		r.stuck = false
	case worker.Exited:
		rp.exited(ctx, r, rep.ExitCode, rep.Refusal)
	}
}

// confirmed moves the task to running and has the brief rendered with every
// decision known now. Decisions recorded later are typed live.
func (rp *reporter) confirmed(ctx context.Context, r *run, rep worker.Report) {
	if ok, _ := rp.confirm(ctx, r, fmt.Sprintf("Session %s is ready: its prompt showed and the screen settled.", short(r.sessionID)), rep); !ok {
		return
	}
	if r.brief != "" {
		// Delivered at launch (as an argument or the brief file); the
		// session already has it.
		r.briefed = true
		rp.life.updateSession(ctx, r, func(s *store.Session) { s.Brief = r.brief })
		how := "as its last argument"
		if r.spec.Delivery == session.DeliveryFile {
			how = "in " + task.BriefPath
		}
		rp.recordBriefDelivered(ctx, r, fmt.Sprintf("Brief delivered to session %s %s (%d bytes).", short(r.sessionID), how, len(r.brief)))
		return
	}
	rp.deliverBrief(ctx, r)
}

// recordBriefDelivered records the brief's delivery to r's session under
// r's lease token: once another engine took the task over (a step-down
// during a partition, the fault run), the old session's brief.delivered
// landed after the new holder's session began. Refused, the session is
// stopped and the task left to its holder.
func (rp *reporter) recordBriefDelivered(ctx context.Context, r *run, text string) {
	if rp.gate.recordFor(ctx, r.token, rp.loop.event(r.taskID, r.sessionID, task.EvBriefDelivered, text)) {
		return
	}
	token, _ := rp.st.TaskToken(ctx, r.taskID)
	rp.fencedOut(ctx, r, token)
}

// deliverBrief has r's brief rendered off the loop, with every decision
// known then, and typed into its session; the corrections held while it
// rendered follow it, but those the brief already holds.
func (rp *reporter) deliverBrief(ctx context.Context, r *run) {
	next := rp.tasks[r.taskID]
	w := r.w
	rp.loop.async(func() func() {
		text, ids, err := renderBrief(ctx, rp.st, rp.repo.Rules(), rp.cfg.Brief.Budget, next, r, r.dir)
		return func() {
			if rp.runs[r.taskID] != r || r.stopping {
				held := r.held
				r.held = nil
				for _, in := range held {
					in.Done <- worker.ErrClosed
				}
				return
			}
			if err != nil && rp.holdRead(err, func() { rp.deliverBrief(ctx, r) }) {
				// A network store that did not answer (a restart, a
				// partition) is not the task's failure: the agent waits
				// at its prompt, its corrections stay held, and the brief
				// is rendered again once the store answers. The fault
				// run's restart mid-read cost a task an attempt.
				return
			}
			held := r.held
			r.held = nil
			if err != nil {
				// Without a brief the agent waits at its prompt: not stuck
				// (it waits on the console), making no progress, so only
				// the lease would end it, minutes later. Stop it and run the
				// phase again (counted, so a store that keeps failing ends
				// the task).
				detail := fmt.Sprintf("The brief of session %s could not be rendered: %v. The session was stopped and the phase runs again.", short(r.sessionID), err)
				rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, task.ReasonDeliveryFailed, detail))
				r.addError(task.ReasonDeliveryFailed.Sentence() + " " + detail)
				for _, in := range held {
					in.Done <- fmt.Errorf("the brief could not be rendered: %w", err)
				}
				rp.life.stopThen(ctx, r, store.SessionKilled, detail, func() {
					rp.life.requeue(ctx, r, task.ReasonDeliveryFailed, detail, true)
				})
				return
			}
			r.brief = text
			rp.life.updateSession(ctx, r, func(s *store.Session) { s.Brief = text })
			w.Send(worker.Input{Kind: worker.InputBrief, Text: text})
			inBrief := map[string]bool{}
			for _, id := range ids {
				inBrief[id] = true
			}
			r.inBrief = inBrief
			for _, in := range held {
				if inBrief[in.ID] {
					in.Done <- nil // it reached the session in its brief
					continue
				}
				w.Send(in)
			}
		}
	})
}

// confirm moves r's task from leased to running, fenced by r's token, and
// marks the session confirmed, on report rep. It reports whether the write
// was made, and whether it was held instead: a network store that did not
// answer holds rep until it does (outage.go), when the report is handled
// again, so the session waits, uncharged, at its prompt or with its
// sealed artifact. The fault run's session so waited for good: its
// confirm cut by a reset was refused, nothing confirmed it again, and the
// task stayed leased until its lease ran out twenty minutes later, charged.
func (rp *reporter) confirm(ctx context.Context, r *run, text string, rep worker.Report) (ok, held bool) {
	ev := rp.loop.event(r.taskID, r.sessionID, task.EvSessionConfirmed, text)
	res, err := rp.st.TaskTransition(ctx, store.Confirm(r.taskID, r.token, rp.loop.now(), ev))
	if err != nil && rp.holdRead(err, func() { rp.handleReport(ctx, rep) }) {
		return false, true
	}
	if err != nil {
		rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, task.ReasonStaleLeaseToken, err.Error()))
		rp.life.reloadTask(ctx, r.taskID)
		return false, false
	}
	rp.tasks[r.taskID] = res.Task
	rp.hub.event(ev)
	r.confirmed = true
	// The agent's own clock starts now: how long its CLI took to start is
	// bounded by launch_timeout, not by the lease (a launch that outlasted
	// the lease held it, launchingRenewal), and a session confirmed just
	// before its lease ran out must not lose it before its first step.
	rp.leases.rebaseLease(ctx, r)
	rp.life.updateSession(ctx, r, func(s *store.Session) { s.Status = store.SessionConfirmed })
	return true, false
}

// confirmBySeal confirms a session whose phase finished before its launch
// was confirmed: a one-shot agent that shows no prompt, or one whose banner
// scrolled away before its ready marker matched. The artifact it left is
// the proof that it ran. When the confirmation cannot be written, the
// session is stopped and the phase runs again, so the task is never left
// leased with nothing behind it.
func (rp *reporter) confirmBySeal(ctx context.Context, r *run, rep worker.Report) bool {
	ok, held := rp.confirm(ctx, r, fmt.Sprintf("Session %s is confirmed by its artifact: it finished phase %s before its ready marker settled.", short(r.sessionID), r.phase), rep)
	if ok {
		if r.brief != "" {
			r.briefed = true
			rp.life.updateSession(ctx, r, func(s *store.Session) { s.Brief = r.brief })
		}
		return true
	}
	if held {
		return false // the report is handled again once the store answers
	}
	detail := fmt.Sprintf("Session %s finished phase %s, but its confirmation could not be recorded.", short(r.sessionID), r.phase)
	r.addError(detail)
	rp.life.stopThen(ctx, r, store.SessionKilled, detail, func() {
		rp.life.requeue(ctx, r, task.ReasonStaleLeaseToken, detail, true)
	})
	return false
}

// exited handles the process's end. An exit the coordinator caused is
// expected; any other exit before the phase finished is a crash.
//
// why, from the worker, says what the agent left unfinished (no sentinel,
// an invalid artifact); it becomes the dead end's text, so the next brief
// says why the last attempt did not count.
func (rp *reporter) exited(ctx context.Context, r *run, code int, why *task.Refusal) {
	if r.stopping || r.finishing {
		return // whoever stopped it finishes the bookkeeping
	}
	if rp.limitExit(ctx, r, code) {
		return
	}
	r.stopping = true
	reason := task.ReasonSessionExited
	detail := fmt.Sprintf("Session %s exited with code %d before finishing phase %s.", short(r.sessionID), code, r.phase)
	dead := fmt.Sprintf("Attempt %d of %s: the agent exited with code %d mid-phase.", r.attempt, r.phase, code)
	if why != nil {
		reason = why.Reason
		detail = fmt.Sprintf("Session %s ended before finishing phase %s: %s", short(r.sessionID), r.phase, why.Detail)
		dead = fmt.Sprintf("Attempt %d of %s: %s", r.attempt, r.phase, why.Detail)
	}
	if reason == task.ReasonHostLost && rp.infraRetry.lostHost(r.taskID) {
		// The machine's failure: relaunched with the continuity, after
		// the machine-failure backoff, the attempt given back, and no dead
		// end for the next brief to blame the approach for.
		d := rp.infraRetry.fail(r.taskID, rp.loop.now())
		detail += fmt.Sprintf(" Relaunched in %s with no attempt counted.", d)
		rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, reason, detail))
		cont := rp.life.captureContinuity(r, rp.life.continuityBase(r, detail))
		rp.life.endRunWith(ctx, r, store.SessionKilled, code, &cont, detail)
		rp.life.requeue(ctx, r, reason, detail, false)
		return
	}
	rp.loop.record(ctx, rp.loop.refusal(r.taskID, r.sessionID, reason, detail))
	r.addError(detail)
	cont := rp.life.captureContinuity(r, rp.life.continuityBase(r, detail))
	rp.life.endRunWith(ctx, r, store.SessionExited, code, &cont, detail)
	rp.life.deadEnd(ctx, r, dead)
	rp.life.requeue(ctx, r, reason, detail, true)
}
