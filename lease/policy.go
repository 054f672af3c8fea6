package lease

import (
	"errors"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A lease's life, as Decide sees it:
//
//	Grant ──► [ wait ] ──now ≥ Deadline-Window──► [ window ] ──now ≥ Deadline──► expire
//	                                                  │
//	                    progress since Baseline ──────┼──► renew: Deadline = started+Length,
//	                                                  │          Baseline = sample, Renewals+1
//	                    no progress / cap reached ────┴──► refuse: the lease stands until Deadline
//
// A refused renewal does not end the lease; it just stops extending it, so a
// pane that resumes progress before the deadline is renewed on a later try.

// Policy is the lease policy's configuration.
type Policy struct {
	// Length is how long a grant or a renewal trusts the session for.
	Length time.Duration
	// Window is how long before the deadline renewal is considered. Before
	// the window opens there is nothing to decide.
	Window time.Duration
	// MaxRenewals caps renewals per lease, so a session that keeps producing
	// churn without finishing still ends.
	MaxRenewals int
}

// DefaultPolicy returns the policy used when the config says nothing:
// 20 minute leases, renewed in their last 5 minutes, at most 12 times.
func DefaultPolicy() Policy {
	return Policy{Length: 20 * time.Minute, Window: 5 * time.Minute, MaxRenewals: 12}
}

// Validate reports a policy that cannot work, in words for the operator who
// wrote the config.
func (p Policy) Validate() error {
	var errs []error
	if p.Length <= 0 {
		errs = append(errs, fmt.Errorf("lease length must be positive, got %s", p.Length))
	}
	if p.Window <= 0 {
		errs = append(errs, fmt.Errorf("lease renewal window must be positive, got %s", p.Window))
	}
	if p.Length > 0 && p.Window >= p.Length {
		errs = append(errs, fmt.Errorf("lease renewal window (%s) must be shorter than the lease (%s)", p.Window, p.Length))
	}
	if p.MaxRenewals < 0 {
		errs = append(errs, fmt.Errorf("lease renewal cap must not be negative, got %d", p.MaxRenewals))
	}
	return errors.Join(errs...)
}

// Action is what the policy decided to do with a lease.
type Action string

// The policy's actions.
const (
	// ActionRenew extends the lease: the pane made progress in the window.
	ActionRenew Action = "renew"
	// ActionWait means there is nothing to decide yet: the window is not open.
	ActionWait Action = "wait"
	// ActionRefuse declines a renewal (no progress, or the cap is reached).
	// The lease stands until its deadline.
	ActionRefuse Action = "refuse"
	// ActionExpire ends the lease: its deadline has passed.
	ActionExpire Action = "expire"
)

// Decision is the policy's answer for one lease at one instant.
type Decision struct {
	Action Action
	// Reason is set for refuse and expire; empty for renew and wait.
	Reason task.Reason
	// Text is one operator sentence with the specifics (times, counts).
	Text string
	// Lease is the lease to store: for a renewal the new deadline, baseline
	// and count; for every action LastDecision, LastReason and LastProgressAt
	// brought up to date.
	Lease Lease
}

// Grant returns a fresh lease for a launch at now. baseline is the progress
// sample taken at launch: the first renewal needs progress beyond it, so a
// launch that does nothing is not renewed.
func Grant(taskID task.ID, holder string, token int64, now time.Time, p Policy, baseline Progress) Lease {
	return Lease{
		TaskID:    taskID,
		Holder:    holder,
		Token:     token,
		GrantedAt: now,
		Deadline:  now.Add(p.Length),
		Baseline:  baseline,
	}
}

// Remaining returns how long the lease has left at now; zero once it is due.
func (l Lease) Remaining(now time.Time) time.Duration {
	if d := l.Deadline.Sub(now); d > 0 {
		return d
	}
	return 0
}

// WindowOpensAt returns the instant from which a renewal is considered.
func (l Lease) WindowOpensAt(p Policy) time.Time { return l.Deadline.Add(-p.Window) }

// Extend returns the lease with its deadline moved later by d: the operator's
// "give it more time". It is not a renewal, so the baseline and the renewal
// count stay as they are.
func (l Lease) Extend(d time.Duration) Lease {
	l.Deadline = l.Deadline.Add(d)
	return l
}

// Advanced reports whether sample shows progress beyond base: a different
// screen fingerprint, a different worktree fingerprint, more artifacts, or
// CPU time that is work (CPUWorks over the time between them). Fewer
// artifacts is not progress (something was deleted, not produced).
func (sample Progress) Advanced(base Progress) bool {
	return sample.Screen != base.Screen ||
		sample.Worktree != base.Worktree ||
		sample.Artifacts > base.Artifacts ||
		sample.cpuAdvanced(base)
}

// Decide applies policy p to lease l at now, given the newest progress
// sample. started is when this renewal attempt began (before the sample was
// taken): a renewal's deadline is started+Length and never later, so time
// spent sampling and deciding is not added to the trust the lease carries.
//
// LastProgressAt is kept simple: whenever the sample shows progress beyond
// the lease's baseline (by Progress.Advanced), it is set to the sample's time
// (or now, if the sample carries none). It never moves backwards.
func Decide(l Lease, p Policy, sample Progress, started, now time.Time) Decision {
	if started.After(now) || started.IsZero() {
		// A renewal cannot have begun after the decision; trust the later
		// instant only as far as now.
		started = now
	}
	advanced := sample.Advanced(l.Baseline)
	if advanced {
		at := sample.At
		if at.IsZero() {
			at = now
		}
		if at.After(l.LastProgressAt) {
			l.LastProgressAt = at
		}
	}

	d := decide(l, p, sample, advanced, started, now)
	d.Lease.LastDecision = string(d.Action)
	d.Lease.LastReason = d.Reason
	return d
}

func decide(l Lease, p Policy, sample Progress, advanced bool, started, now time.Time) Decision {
	if !now.Before(l.Deadline) {
		return Decision{
			Action: ActionExpire,
			Reason: task.ReasonLeaseExpired,
			Text: fmt.Sprintf("Lease expired at %s (%s ago) after %d renewal(s); %s.",
				clock(l.Deadline), round(now.Sub(l.Deadline)), l.Renewals, lastProgress(l)),
			Lease: l,
		}
	}
	opens := l.WindowOpensAt(p)
	if now.Before(opens) {
		return Decision{
			Action: ActionWait,
			Text: fmt.Sprintf("Renewal window opens at %s (in %s); the lease runs until %s.",
				clock(opens), round(opens.Sub(now)), clock(l.Deadline)),
			Lease: l,
		}
	}
	if l.Renewals >= p.MaxRenewals {
		return Decision{
			Action: ActionRefuse,
			Reason: task.ReasonRenewalCap,
			Text: fmt.Sprintf("Not renewed: %d of %d renewals used; the lease stands until %s (%s left).",
				l.Renewals, p.MaxRenewals, clock(l.Deadline), round(l.Remaining(now))),
			Lease: l,
		}
	}
	if !advanced {
		return Decision{
			Action: ActionRefuse,
			Reason: task.ReasonRenewalNoProgress,
			Text: fmt.Sprintf("Not renewed: no change on screen, in the worktree or in artifacts, and no CPU work, since %s; the lease stands until %s (%s left).",
				baselineAt(l), clock(l.Deadline), round(l.Remaining(now))),
			Lease: l,
		}
	}
	renewed := l
	renewed.Deadline = started.Add(p.Length)
	renewed.Baseline = sample
	renewed.Renewals = l.Renewals + 1
	return Decision{
		Action: ActionRenew,
		Text: fmt.Sprintf("Renewed (%d of %d): %s; the lease now runs until %s, %s from when this renewal began.",
			renewed.Renewals, p.MaxRenewals, whatChanged(sample, l.Baseline), clock(renewed.Deadline), round(p.Length)),
		Lease: renewed,
	}
}

// whatChanged names the kinds of progress seen, for the renewal sentence.
func whatChanged(sample, base Progress) string {
	var parts []string
	if sample.Screen != base.Screen {
		parts = append(parts, "the screen")
	}
	if sample.Worktree != base.Worktree {
		parts = append(parts, "the worktree")
	}
	if sample.Artifacts > base.Artifacts {
		parts = append(parts, fmt.Sprintf("artifacts (%d → %d)", base.Artifacts, sample.Artifacts))
	}
	changed := ""
	switch len(parts) {
	case 0:
	case 1:
		changed = parts[0] + " changed"
	case 2:
		changed = parts[0] + " and " + parts[1] + " changed"
	default:
		changed = parts[0] + ", " + parts[1] + " and " + parts[2] + " changed"
	}
	if !sample.cpuAdvanced(base) {
		return changed
	}
	worked := fmt.Sprintf("the session's processes used %s CPU in %s", roundCPU(sample.CPU-base.CPU), roundCPU(sample.At.Sub(base.At)))
	if changed == "" {
		return worked
	}
	return changed + ", and " + worked
}

func baselineAt(l Lease) string {
	if l.Baseline.At.IsZero() {
		return "the launch"
	}
	return clock(l.Baseline.At)
}

func lastProgress(l Lease) string {
	if l.LastProgressAt.IsZero() {
		return "no progress was ever seen"
	}
	return "last progress at " + clock(l.LastProgressAt)
}

// clock formats an instant as the operator reads it on a wall clock.
func clock(t time.Time) string { return t.Format("15:04:05") }

// roundCPU rounds a CPU time to what tells: tenths of a second below ten
// seconds (a lease of seconds renews on fractions of one), seconds above.
func roundCPU(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return round(d)
}

// round drops sub-second noise from durations shown to the operator.
func round(d time.Duration) time.Duration { return d.Round(time.Second) }
