package coord

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// handleReport applies a worker's report. A report from a session that no
// longer holds the task's lease is refused and recorded: a session whose
// lease was taken away can never seal an artifact or finish a phase.
func (c *Coordinator) handleReport(ctx context.Context, rep worker.Report) {
	r := c.runs[rep.TaskID]
	if r == nil || r.sessionID != rep.SessionID || r.token != rep.Token {
		// Only a report that would write (a confirm, a seal) is a refused
		// write. The rest (stuck, unstuck, a refusal typed into its own
		// pane, an input typed, an exit) routinely reach the loop just
		// after the closure that ended their run, which the loop may pick
		// first: reporting them as refused writes would alarm for nothing.
		if rep.Kind == worker.Confirmed || rep.Kind == worker.PhaseFinished {
			c.record(ctx, c.refusalEvent(rep.TaskID, rep.SessionID, task.ReasonStaleLeaseToken,
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
		if c.onEarlyReport != nil {
			c.onEarlyReport(rep)
		}
		return
	}
	switch rep.Kind {
	case worker.Confirmed:
		if r.confirmed || r.finishing {
			return // a sealed artifact confirmed it already
		}
		c.confirmed(ctx, r)
	case worker.NeedsYou, worker.Answered:
		noteDialog(ctx, loopOf(c), r, rep)
	case worker.Limited:
		noteLimit(ctx, c, r, rep)
	case worker.LimitGone:
		limitGone(ctx, c, r)
	case worker.LaunchRefused:
		r.stopping = true
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, rep.Refusal.Reason, rep.Refusal.Detail))
		r.addError(rep.Refusal.Error())
		c.life.stopThen(ctx, r, store.SessionKilled, rep.Refusal.Error(), func() {
			c.life.requeue(ctx, r, rep.Refusal.Reason, rep.Refusal.Error(), true)
		})
	case worker.InputDelivered:
		switch rep.Input {
		case worker.InputBrief:
			r.briefed = true
			c.leases.rebaseLease(ctx, r)
			c.record(ctx, c.event(r.taskID, r.sessionID, task.EvBriefDelivered,
				fmt.Sprintf("Brief delivered to session %s (%d bytes).", short(r.sessionID), len(r.brief))))
		case worker.InputRefusal:
			// The refusal event was recorded when the artifact was refused.
		}
	case worker.InputRefused:
		// The bytes are in the pane, so a brief counts as delivered (the
		// stuck clock runs from it); the refusal says what the screen
		// shows, and a resubmit is the operator's next move.
		if rep.Input == worker.InputBrief {
			r.briefed = true
			c.leases.rebaseLease(ctx, r)
		}
		r.addError(rep.Refusal.Error())
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, rep.Refusal.Reason,
			fmt.Sprintf("Session %s, %s: %s", short(r.sessionID), rep.Input, rep.Refusal.Detail)))
	case worker.Refused:
		r.addError(rep.Refusal.Error())
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, rep.Refusal.Reason,
			rep.Refusal.Detail+" The refusal was typed into the pane."))
	case worker.PhaseFinished:
		if !r.confirmed && !c.confirmBySeal(ctx, r) {
			return
		}
		c.gate.phaseFinished(ctx, r, rep)
	case worker.Stuck:
		if r.limit != nil {
			return // it waits for its provider, not stuck
		}
		r.stuck = true
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, task.ReasonStuck,
			fmt.Sprintf("Session %s has shown the same screen for %s.", short(r.sessionID), rep.Idle.Round(1e9))))
		if c.cfg.Stuck.AutoResubmit > 0 {
			if r.resubmits < c.cfg.Stuck.AutoResubmit {
				c.leases.resubmit(ctx, r, "auto")
			} else if r.resubmits == c.cfg.Stuck.AutoResubmit {
				r.resubmits++
				c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, task.ReasonResubmitCap, ""))
			}
		}
	case worker.Unstuck:
		r.stuck = false
	case worker.Exited:
		c.exited(ctx, r, rep.ExitCode, rep.Refusal)
	}
}

// confirmed moves the task to running and has the brief rendered with every
// decision known now. Decisions recorded later are typed live.
func (c *Coordinator) confirmed(ctx context.Context, r *run) {
	if !c.confirm(ctx, r, fmt.Sprintf("Session %s is ready: its prompt showed and the screen settled.", short(r.sessionID))) {
		return
	}
	next := c.tasks[r.taskID]
	if r.brief != "" {
		// Delivered at launch (as an argument or the brief file); the
		// session already has it.
		r.briefed = true
		c.life.updateSession(ctx, r, func(s *store.Session) { s.Brief = r.brief })
		how := "as its last argument"
		if r.spec.Delivery == session.DeliveryFile {
			how = "in " + task.BriefPath
		}
		c.record(ctx, c.event(r.taskID, r.sessionID, task.EvBriefDelivered,
			fmt.Sprintf("Brief delivered to session %s %s (%d bytes).", short(r.sessionID), how, len(r.brief))))
		return
	}
	w := r.w
	c.async(func() func() {
		text, ids, err := renderBrief(ctx, c.st, c.p.Repo.Rules(), c.cfg.Brief.Budget, next, r, r.dir)
		return func() {
			held := r.held
			r.held = nil
			if c.runs[r.taskID] != r || r.stopping {
				for _, in := range held {
					in.Done <- worker.ErrClosed
				}
				return
			}
			if err != nil {
				// Without a brief the agent waits at its prompt: not stuck
				// (it waits on the console), making no progress, so only
				// the lease would end it, minutes later. Stop it and run the
				// phase again (counted, so a store that keeps failing ends
				// the task).
				detail := fmt.Sprintf("The brief of session %s could not be rendered: %v. The session was stopped and the phase runs again.", short(r.sessionID), err)
				c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, task.ReasonDeliveryFailed, detail))
				r.addError(task.ReasonDeliveryFailed.Sentence() + " " + detail)
				for _, in := range held {
					in.Done <- fmt.Errorf("the brief could not be rendered: %w", err)
				}
				c.life.stopThen(ctx, r, store.SessionKilled, detail, func() {
					c.life.requeue(ctx, r, task.ReasonDeliveryFailed, detail, true)
				})
				return
			}
			r.brief = text
			c.life.updateSession(ctx, r, func(s *store.Session) { s.Brief = text })
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
// marks the session confirmed. It reports whether the write was made.
func (c *Coordinator) confirm(ctx context.Context, r *run, text string) bool {
	ev := c.event(r.taskID, r.sessionID, task.EvSessionConfirmed, text)
	res, err := c.st.TaskTransition(ctx, store.Confirm(r.taskID, r.token, c.now(), ev))
	if err != nil {
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, task.ReasonStaleLeaseToken, err.Error()))
		c.life.reloadTask(ctx, r.taskID)
		return false
	}
	c.tasks[r.taskID] = res.Task
	c.hub.event(ev)
	r.confirmed = true
	// The agent's own clock starts now: how long its CLI took to start is
	// bounded by launch_timeout, not by the lease (a launch that outlasted
	// the lease held it, launchingRenewal), and a session confirmed just
	// before its lease ran out must not lose it before its first step.
	c.leases.rebaseLease(ctx, r)
	c.life.updateSession(ctx, r, func(s *store.Session) { s.Status = store.SessionConfirmed })
	return true
}

// confirmBySeal confirms a session whose phase finished before its launch
// was confirmed: a one-shot agent that shows no prompt, or one whose banner
// scrolled away before its ready marker matched. The artifact it left is
// the proof that it ran. When the confirmation cannot be written, the
// session is stopped and the phase runs again, so the task is never left
// leased with nothing behind it.
func (c *Coordinator) confirmBySeal(ctx context.Context, r *run) bool {
	if c.confirm(ctx, r, fmt.Sprintf("Session %s is confirmed by its artifact: it finished phase %s before its ready marker settled.", short(r.sessionID), r.phase)) {
		if r.brief != "" {
			r.briefed = true
			c.life.updateSession(ctx, r, func(s *store.Session) { s.Brief = r.brief })
		}
		return true
	}
	detail := fmt.Sprintf("Session %s finished phase %s, but its confirmation could not be recorded.", short(r.sessionID), r.phase)
	r.addError(detail)
	c.life.stopThen(ctx, r, store.SessionKilled, detail, func() {
		c.life.requeue(ctx, r, task.ReasonStaleLeaseToken, detail, true)
	})
	return false
}

// exited handles the process's end. An exit the coordinator caused is
// expected; any other exit before the phase finished is a crash.
//
// why, from the worker, says what the agent left unfinished (no sentinel,
// an invalid artifact); it becomes the dead end's text, so the next brief
// says why the last attempt did not count.
func (c *Coordinator) exited(ctx context.Context, r *run, code int, why *task.Refusal) {
	if r.stopping || r.finishing {
		return // whoever stopped it finishes the bookkeeping
	}
	if limitExit(ctx, c, r, code) {
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
	if reason == task.ReasonHostLost && c.infraRetry.lostHost(r.taskID) {
		// The machine's failure: relaunched with the continuity, after
		// the machine-failure backoff, the attempt given back, and no dead
		// end for the next brief to blame the approach for.
		d := c.infraRetry.fail(r.taskID, c.now())
		detail += fmt.Sprintf(" Relaunched in %s with no attempt counted.", d)
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, reason, detail))
		cont := c.life.captureContinuity(r, c.life.continuityBase(r, detail))
		c.life.endRunWith(ctx, r, store.SessionKilled, code, &cont, detail)
		c.life.requeue(ctx, r, reason, detail, false)
		return
	}
	c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, reason, detail))
	r.addError(detail)
	cont := c.life.captureContinuity(r, c.life.continuityBase(r, detail))
	c.life.endRunWith(ctx, r, store.SessionExited, code, &cont, detail)
	c.life.deadEnd(ctx, r, dead)
	c.life.requeue(ctx, r, reason, detail, true)
}

func (lc *lifecycle) updateSession(ctx context.Context, r *run, f func(*store.Session)) {
	again := func() { lc.updateSession(ctx, r, f) }
	s, err := lc.st.SessionGet(ctx, r.sessionID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			lc.holdWrite(err, again)
		}
		return
	}
	f(&s)
	s.Fence = r.token
	if err := lc.st.SessionUpdate(ctx, s); errors.Is(err, store.ErrStaleToken) {
		return // another engine holds the task: its rescue marked the row
	} else if err != nil && !lc.holdWrite(err, again) {
		lc.loop.record(ctx, lc.loop.refusal(r.taskID, r.sessionID, task.ReasonIllegalTransition, "Session record: "+err.Error()))
	}
}

// holdSessionWrite holds a session row's write that a network store did
// not take (a database restart cut the connection) until the store answers
// again, and reports true; an embedded store's failure is not held. A
// session's end used to be lost so: the row stayed live until another
// engine's rescue marked it, seconds later, and the fault run's checker
// saw the session overlap its successor; the refusal called a connection
// error an illegal transition.
func holdSessionWrite(c *Coordinator, err error, again func()) bool {
	if c.sw.path != "" {
		return false
	}
	c.writeFailed(err)
	holdUntilBack(c, again)
	return true
}
