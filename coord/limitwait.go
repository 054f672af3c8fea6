package coord

import (
	"context"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// FlagLimited starts the flag (TaskView.Flag) of a task that waits for its
// provider's limit to reset; the limit and the reset follow, and
// TaskView.LimitReset carries the time for the list's countdown.
const FlagLimited = "Waiting for the limit: "

// limitWaits is what this engine knows of its providers' limits: per
// harness, the reset that one of its sessions showed. Until then no new
// session of that harness starts here, so a queue of tasks does not walk
// one by one into the same limit. It lives on the coordinator's loop.
type limitWaits struct {
	until map[string]time.Time
	why   map[string]string
}

// hold makes harness h wait until until (the later of two holds wins).
func (w *limitWaits) hold(h string, until time.Time, why string) {
	if w.until == nil {
		w.until, w.why = map[string]time.Time{}, map[string]string{}
	}
	if until.After(w.until[h]) {
		w.until[h], w.why[h] = until, why
	}
}

// waiting returns the reset harness h waits for at now, and why; ok is
// false once it has passed (and the hold is forgotten).
func (w *limitWaits) waiting(h string, now time.Time) (until time.Time, why string, ok bool) {
	u, held := w.until[h]
	if !held {
		return time.Time{}, "", false
	}
	if !now.Before(u) {
		delete(w.until, h)
		delete(w.why, h)
		return time.Time{}, "", false
	}
	return u, w.why[h], true
}

// limitHold is a live session's wait for its provider's limit.
type limitHold struct {
	kind  session.LimitKind
	text  string
	until time.Time // zero: until the operator acts (an expired login)
	// guessed is set when the CLI gave no reset and limits.limit_wait
	// chose it.
	guessed bool
	// retrying is set when the CLI said it retries by itself (the
	// harness's limit_retry): nothing is typed at the reset.
	retrying bool
}

// flag is the hold as the task's flag.
func (h *limitHold) flag() string {
	when := "until you log in again"
	switch {
	case h.retrying && h.guessed:
		when = "no reset given, the CLI retries by itself"
	case !h.until.IsZero():
		when = "resets " + h.until.Format(time.TimeOnly)
		if h.guessed {
			when += " (no reset given; limits.limit_wait)"
		}
	}
	return FlagLimited + string(h.kind) + ", " + when + ": " + h.text
}

// noteLimit handles a worker's Limited report. The session waits: the lease
// is held (holdLimitLease), no attempt is charged, the stuck clock does
// not count, and at the reset the same conversation goes on (resumeAtReset).
// New launches of the harness wait for the reset too. With [limits]
// on_limit = "handoff:HARNESS" the task moves to that harness instead.
// An overload holds its session (not stuck while the CLI retries, or
// after it gave up) for a shorter wait, and other launches go on.
func noteLimit(ctx context.Context, c *Coordinator, r *run, rep worker.Report) {
	l := rep.Limit
	if l == nil || r.finishing || r.stopping {
		return
	}
	now := c.now()
	h := &limitHold{kind: l.Kind, text: l.Text, until: l.Reset, retrying: l.Retrying}
	if h.until.IsZero() || !h.until.After(now) {
		h.until, h.guessed = now.Add(c.cfg.Limits.LimitWaitOr()), true
		if l.Kind == session.LimitOverloaded {
			h.until = now.Add(min(overloadWait, c.cfg.Limits.LimitWaitOr()))
		}
		if l.Kind == session.LimitLogin {
			h.until, h.guessed = time.Time{}, false
		}
	}
	t := c.tasks[r.taskID]
	harness := harnessOf(t)
	if to := c.cfg.Limits.HandoffOnLimit(); to != "" && to != harness &&
		(l.Kind == session.LimitUsage || l.Kind == session.LimitRate) {
		handoffOnLimit(ctx, c, r, to, h)
		return
	}
	r.limit = h
	if l.Kind == session.LimitUsage || l.Kind == session.LimitRate {
		c.limits.hold(harness, h.until, h.flag())
	}
	ev := c.event(r.taskID, r.sessionID, task.EvSessionLimited, limitSentence(r, h))
	ev.Reason = task.ReasonProviderLimit
	c.record(ctx, ev)
}

// overloadWait is how long an overload that names no retry time waits
// before "continue" is typed: Claude Code 2.1.332 shows a 529 from a
// gateway once ("API Error: 529 Overloaded … try again in a moment") and
// does not retry it itself.
const overloadWait = 30 * time.Second

// limitSentence says what the session waits for and what happens then.
func limitSentence(r *run, h *limitHold) string {
	then := "at the reset, " + resumeWhat(r.spec) + " into the same conversation"
	switch {
	case h.retrying:
		then = "the CLI retries by itself, and nothing is typed at the reset"
	case h.kind == session.LimitOverloaded:
		then = "the session is not flagged stuck meanwhile, and at the end of the wait " + resumeWhat(r.spec)
	case h.until.IsZero():
		then = "log in again in focus mode (enter on the task)"
	}
	when := "no reset given"
	if h.retrying && h.guessed {
		when = "no reset given; the wait lasts while the CLI shows its retry"
	} else if !h.until.IsZero() {
		when = "resets " + h.until.Format(time.TimeOnly)
		if h.guessed {
			when = "no reset given, waits until " + h.until.Format(time.TimeOnly) + " (limits.limit_wait)"
		}
	}
	return fmt.Sprintf("Session %s: the provider's %s (%s): %s. The lease is held and no attempt is charged; %s.",
		short(r.sessionID), h.kind, when, h.text, then)
}

// holdLimitLease keeps the lease of a session that waits for a limit: a
// decision to refuse or expire it for want of progress becomes a renewal,
// not counted against lease.max_renewals. It returns the decision to act
// on.
func holdLimitLease(r *run, p lease.Policy, d lease.Decision, sample lease.Progress, started time.Time) lease.Decision {
	if r.limit == nil || (d.Action != lease.ActionExpire && d.Action != lease.ActionRefuse) {
		return d
	}
	renewed := r.lease
	renewed.Deadline = started.Add(p.Length)
	renewed.Baseline = sample
	return lease.Decision{Action: lease.ActionRenew, Lease: renewed,
		Text: fmt.Sprintf("Renewed while session %s waits for its provider's %s; the lease now runs until %s.",
			short(r.sessionID), r.limit.kind, renewed.Deadline.Format(time.TimeOnly))}
}

// resumeAtReset ends r's wait once its reset has come: "continue" (the
// harness's limit_resume) is typed into the same conversation. The lease
// starts afresh from then.
func resumeAtReset(ctx context.Context, c *Coordinator, r *run) {
	h := r.limit
	if h == nil || h.until.IsZero() || c.now().Before(h.until) {
		return
	}
	if h.retrying && h.guessed {
		// The CLI named no reset and retries on its own backoff: the
		// wait lasts while its message shows (limitGone).
		return
	}
	r.limit = nil
	r.stuck = false
	text := "The limit's reset came; the session goes on."
	switch {
	case h.retrying:
		// The CLI's own retry picks the turn up: "continue" typed now
		// would be a second turn queued behind it.
		text = fmt.Sprintf("The limit's reset came (%s); session %s retries by itself, so nothing is typed.",
			h.until.Format(time.TimeOnly), short(r.sessionID))
	case r.w != nil:
		resume := r.spec.LimitResume
		if resume == "" {
			resume = "continue"
		}
		r.w.Send(worker.Input{Kind: worker.InputContinue, Text: resume})
		text = fmt.Sprintf("The limit's reset came (%s); %s into session %s to go on in the same conversation.",
			h.until.Format(time.TimeOnly), resumeWhat(r.spec), short(r.sessionID))
	}
	c.record(ctx, c.event(r.taskID, r.sessionID, task.EvSessionLimitReset, text))
	c.leases.rebaseLease(ctx, r)
}

// limitGone ends the wait of a session whose CLI retries by itself once
// its limit message has left the screen: the retry went through, before or
// after the reset the wait was given. A CLI that leaves its message in the
// history waits for the reset as before.
func limitGone(ctx context.Context, c *Coordinator, r *run) {
	h := r.limit
	if h == nil || !h.retrying {
		return
	}
	r.limit = nil
	r.stuck = false
	c.record(ctx, c.event(r.taskID, r.sessionID, task.EvSessionLimitReset,
		fmt.Sprintf("Session %s retries by itself, and its retry went through (its %s message is gone); the session goes on, and nothing is typed.",
			short(r.sessionID), h.kind)))
	c.leases.rebaseLease(ctx, r)
}

// resumeWhat says what resumeAtReset types for spec.
func resumeWhat(spec session.Spec) string {
	switch spec.LimitResume {
	case "":
		return `"continue" is typed`
	case session.LimitResumeSubmit:
		return "the submit key is sent (the CLI asks whether to keep trying)"
	default:
		return fmt.Sprintf("%q is typed", spec.LimitResume)
	}
}

// limitedQueued returns the flag of a queued task whose harness waits for
// a limit's reset on this engine, "" when it may start.
func limitedQueued(c *Coordinator, t task.Task) string {
	_, why, ok := c.limits.waiting(harnessOf(t), c.now())
	if !ok {
		return ""
	}
	return why + " Its harness's sessions wait for the reset; no attempt is counted."
}

// limitExit handles the exit of a session that waits for a limit (a CLI
// that quits at its limit): the phase runs again, with its continuity
// brief, once the reset has come, and the attempt is not charged. It
// reports whether it took the exit.
func limitExit(ctx context.Context, c *Coordinator, r *run, code int) bool {
	h := r.limit
	if h == nil {
		return false
	}
	r.stopping = true
	detail := fmt.Sprintf("Session %s exited with code %d while waiting for its provider's %s; the phase runs again after the reset with its continuity, and the attempt is not charged.",
		short(r.sessionID), code, h.kind)
	cont := c.life.captureContinuity(r, c.life.continuityBase(r, detail))
	c.life.endRunWith(ctx, r, store.SessionExited, code, &cont, detail)
	c.life.requeue(ctx, r, task.ReasonProviderLimit, detail, false)
	return true
}

// handoffOnLimit moves r's task to harness to ([limits] on_limit): the
// session is stopped with its continuity captured, and the task is
// requeued on the other harness in one store transition that also signs
// it again (the harness is part of what the signature covers). No attempt
// is charged; the next brief carries the continuity.
func handoffOnLimit(ctx context.Context, c *Coordinator, r *run, to string, h *limitHold) {
	from := harnessOf(c.tasks[r.taskID])
	c.limits.hold(from, h.until, h.flag())
	detail := fmt.Sprintf("Session %s (%s): the provider's %s: %s. Handed off to harness %s (limits.on_limit), with its continuity; no attempt is charged.",
		short(r.sessionID), from, h.kind, h.text, to)
	ev := c.event(r.taskID, r.sessionID, task.EvSessionLimited, detail)
	ev.Reason = task.ReasonProviderLimit
	c.record(ctx, ev)
	c.life.stopThen(ctx, r, store.SessionKilled, detail, func() {
		t := c.tasks[r.taskID]
		if !t.State.Live() {
			return
		}
		rq := c.event(r.taskID, r.sessionID, task.EvTaskRequeued,
			fmt.Sprintf("Requeued for phase %s on harness %s after attempt %d: %s", t.Phase, to, t.Attempt, detail))
		rq.Reason = task.ReasonProviderLimit
		c.life.move(ctx, r.taskID, r.token, task.ActRequeue, func(n *task.Task) {
			n.Reason = string(task.ReasonProviderLimit)
			if n.Attempt > 0 {
				n.Attempt--
			}
			n.Harness = to
			n.Model = ""
			n.Signature = c.key.key.Sign(*n)
		}, rq)
	})
}
