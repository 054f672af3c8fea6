package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// ErrBranchTaken means a write would give a second task that has not ended
// the branch another such task works on; the store's live-branch
// constraint refuses it in every driver.
var ErrBranchTaken = errors.New("branch taken by another task")

// BranchTakenError is the operator's sentence for ErrBranchTaken: which
// branch, and (when the driver could tell) which task holds it.
type BranchTakenError struct {
	Branch string
	Holder task.ID // empty when the driver could not read it
}

func (e *BranchTakenError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("branch %s is already worked on by another task that has not ended; "+
			"finish or cancel that task first, or use another branch", e.Branch)
	}
	return fmt.Sprintf("branch %s is already worked on by task %s, which has not ended; "+
		"finish or cancel that task first (or go on with it), or use another branch", e.Branch, e.Holder.Short())
}

// Is makes errors.Is(err, ErrBranchTaken) hold.
func (e *BranchTakenError) Is(target error) bool { return target == ErrBranchTaken }

// EndedStates are the states whose tasks no longer own their branch. The
// store's partial unique index (migration "live branch" in each driver)
// covers every task with a branch in any other state, so two tasks that
// have not ended never share a branch: a state added to the lifecycle is
// covered unless it ends a task, and then it needs a migration that adds
// it to the index's predicate.
var EndedStates = []task.State{task.StateCompleted, task.StateFailed, task.StateCancelled, task.StateMerged}

// LeaseTerms are the terms of a lease a transition grants: the store
// assigns its token (the task's previous token plus one).
type LeaseTerms struct {
	Holder   string
	Deadline time.Time
	Baseline lease.Progress
}

// TaskTransitionParams is the one way a task changes state: the store reads
// the task, applies task.Apply(stored state, Action), lets Edit set the
// coordinator-owned fields (Phase, Attempt, BaseCommit, Branch, Reason; not
// State), writes the result with Events, and grants (Grant), rewrites
// (Lease) or releases the lease, all in one transaction. The lease is
// released whenever the new state is not live.
//
// The write is fenced: when Token is non-zero it must be the task's current
// token (the one the writer holds, or read with the task) and, from a live
// state or while a lease row exists, that row's token (a released lease is
// stale), else ErrStaleToken; when From is set the stored state
// must be From, else ErrConflict (and ErrStaleToken as well when fenced:
// the writer's view under its token has moved on). An action the lifecycle
// forbids is a *task.TransitionError. A refused write changes nothing.
//
// Build it with a constructor (Confirm, Renew, Orphan, Requeue, Seal,
// Finish, Approve, Retry, Cancel, Move; Claim for LeaseClaim), as river
// builds its JobSetStateIfRunningParams.
type TaskTransitionParams struct {
	TaskID task.ID
	// Action is applied with task.Apply; empty keeps the state (a renew).
	Action task.Action
	From   task.State
	Token  int64
	// Unleased fences a write whose writer found the task with no lease
	// row (an orphan of token 0): a row granted since is another
	// holder's, and the write is refused with ErrStaleToken (and
	// ErrConflict). From alone is no fence here: a requeue and a new
	// claim between the writer's read and its write put the task back
	// in the state it read (the fault run: a start-up's reconcile,
	// working from a view read before another engine's claim, requeued
	// the task 67 ms after that engine launched its session, whose
	// agent ran on unrecorded).
	Unleased bool
	At       time.Time
	Edit     func(*task.Task)
	// Grant is the new lease of an ActLease transition.
	Grant *LeaseTerms
	// Lease is the lease row rewritten, fenced by Token (a renew).
	Lease *lease.Lease
	// Events returns the events appended, given the task as stored before.
	Events func(before task.Task) []task.Event
	// EndLive says how the task's live sessions (launching or confirmed)
	// are ended in the same transaction. A transition into the queue
	// (ActRequeue, ActUnpark, ActRetry, ActReturn) ends them whether or
	// not it is set (killed, at At, when it is not): the queue is the one
	// state a grant starts from, so no reader sees the task claimable
	// while an old session of it still counts as live, and no session's
	// end is left to a later, unfenced write that could lie after a newer
	// session's start (the fault run: an engine's end of its session, cut
	// by a reset connection and held, was refused by CheckGrant once
	// another engine had claimed the sealed phase's requeue; a rescue then
	// ended it at its own now, 759 ms after the new session began). The
	// engine's own, accurate end (exit code, continuity) still lands
	// afterwards until a newer grant (CheckGrant). Other transitions end
	// the live sessions only when EndLive is set: a cancel or a park
	// releases the lease before the engine stops its agent, whose end it
	// records itself.
	EndLive *SessionsEnd
}

// endLive is how a transition from state from to state to ends the task's
// live sessions, nil for not at all (see EndLive).
func (p TaskTransitionParams) endLive(from, to task.State) *SessionsEnd {
	switch {
	case p.EndLive != nil:
		e := *p.EndLive
		return &e
	case to == task.StateQueued && from != task.StateQueued:
		return &SessionsEnd{Status: SessionKilled, At: p.At.UTC()}
	}
	return nil
}

// SessionsEnd is how a transition ends a task's live sessions.
type SessionsEnd struct {
	Status SessionStatus
	At     time.Time
	// Continuity gives a session that has no continuity record one (nil:
	// none).
	Continuity func(Session) string
}

// End returns s ended as e says.
func (e SessionsEnd) End(s Session) Session {
	s.Status, s.EndedAt = e.Status, e.At
	if s.Continuity == "" && e.Continuity != nil {
		s.Continuity = e.Continuity(s)
	}
	return s
}

// TaskTransitionResult is what a transition wrote.
type TaskTransitionResult struct {
	Before task.Task
	Task   task.Task
	// Lease is the lease granted or rewritten (zero otherwise).
	Lease lease.Lease
	// Released reports that the task's lease row was deleted.
	Released bool
}

// TransitionPlan is what a driver writes for a transition, decided by
// TaskTransitionParams.Plan from what the transaction read.
type TransitionPlan struct {
	Task task.Task
	// Token is the task's token after the write.
	Token int64
	// Upsert is the lease row to write, nil for none.
	Upsert *lease.Lease
	// Release deletes the task's lease row.
	Release bool
	Events  []task.Event
	// EndLive ends the task's live sessions, nil for not at all
	// (TaskTransitionParams.EndLive).
	EndLive *SessionsEnd
}

// Plan decides a transition from the task as stored, its current token and
// the token of its lease row (0 when it has none). Drivers call it inside
// their write transaction and write what it returns, so the rules live here
// once.
func (p TaskTransitionParams) Plan(before task.Task, token, leaseToken int64) (TransitionPlan, error) {
	id := before.ID
	if p.Token != 0 {
		if token != p.Token {
			return TransitionPlan{}, fmt.Errorf("%s task %s: lease token %d is not the current %d: %w", p.verb(), id, p.Token, token, ErrStaleToken)
		}
		if (before.State.Live() || leaseToken != 0 || p.Lease != nil) && leaseToken != p.Token {
			return TransitionPlan{}, fmt.Errorf("%s task %s: the lease of token %d was released: %w", p.verb(), id, p.Token, ErrStaleToken)
		}
	}
	if p.Unleased && leaseToken != 0 {
		return TransitionPlan{}, fmt.Errorf("%s task %s: expected it without a lease, but token %d holds it now: %w (%w)", p.verb(), id, leaseToken, ErrStaleToken, ErrConflict)
	}
	if p.From != "" && before.State != p.From {
		if p.Token != 0 {
			return TransitionPlan{}, fmt.Errorf("%s task %s: expected it %s under token %d but it is %s: %w (%w)", p.verb(), id, p.From, p.Token, before.State, ErrStaleToken, ErrConflict)
		}
		return TransitionPlan{}, fmt.Errorf("%s task %s: expected it %s but it is %s: %w", p.verb(), id, p.From, before.State, ErrConflict)
	}
	to := before.State
	if p.Action != "" {
		var err error
		if to, err = task.Apply(before.State, p.Action); err != nil {
			return TransitionPlan{}, fmt.Errorf("task %s: %w", id, err)
		}
	}
	after := before
	after.State, after.UpdatedAt = to, p.At.UTC()
	if p.Edit != nil {
		p.Edit(&after)
		if after.State != to || after.ID != id {
			return TransitionPlan{}, fmt.Errorf("%s task %s: the edit changed its state or id, which only task.Apply sets", p.verb(), id)
		}
	}
	plan := TransitionPlan{Task: after, Token: token}
	switch {
	case p.Grant != nil:
		if p.Action != task.ActLease {
			return TransitionPlan{}, fmt.Errorf("%s task %s: only a lease action grants a lease", p.verb(), id)
		}
		at := p.At.UTC()
		l := lease.Lease{TaskID: id, Holder: p.Grant.Holder, Token: token + 1, GrantedAt: at,
			Deadline: p.Grant.Deadline.UTC(), Baseline: p.Grant.Baseline, LastProgressAt: at}
		l.Baseline.At = l.Baseline.At.UTC()
		plan.Token, plan.Upsert = l.Token, &l
	case p.Action == task.ActLease:
		return TransitionPlan{}, fmt.Errorf("lease task %s: no lease terms given", id)
	case p.Lease != nil:
		if p.Lease.TaskID != id || p.Lease.Token != p.Token || p.Token == 0 {
			return TransitionPlan{}, fmt.Errorf("renew lease of task %s: the lease must carry the fencing token", id)
		}
		l := *p.Lease
		plan.Upsert = &l
	}
	if !to.Live() && leaseToken != 0 {
		plan.Release = true
	}
	if p.Events != nil {
		plan.Events = p.Events(before)
	}
	plan.EndLive = p.endLive(before.State, to)
	return plan, nil
}

// verb names the transition in errors.
func (p TaskTransitionParams) verb() string {
	if p.Action == "" {
		return "renew lease of"
	}
	return string(p.Action)
}

// Result is the TaskTransitionResult of a plan written.
func (pl TransitionPlan) Result(before task.Task) TaskTransitionResult {
	r := TaskTransitionResult{Before: before, Task: pl.Task, Released: pl.Release}
	if pl.Upsert != nil {
		r.Lease = *pl.Upsert
	}
	return r
}

// events wraps a fixed list as a TaskTransitionParams.Events.
func events(evs []task.Event) func(task.Task) []task.Event {
	if len(evs) == 0 {
		return nil
	}
	return func(task.Task) []task.Event { return evs }
}

// Claim builds the LeaseClaimParams of a new attempt: the first
// still-queued candidate is leased to holder until deadline (ActLease), its
// attempt counted and its reason cleared.
func Claim(candidates []task.ID, holder string, at, deadline time.Time, evs func(before task.Task) []task.Event) LeaseClaimParams {
	return LeaseClaimParams{Candidates: candidates, Holder: holder, GrantedAt: at, Deadline: deadline, Events: evs,
		Edit: func(n *task.Task) { n.Attempt, n.Reason = n.Attempt+1, "" }}
}

// Confirm moves a leased task to running under its session's token.
func Confirm(id task.ID, token int64, at time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActConfirm, From: task.StateLeased, Token: token, At: at, Events: events(evs)}
}

// Renew rewrites a live task's lease (a renewal, a new progress baseline, a
// decision noted), fenced by its token; the state stays.
func Renew(l lease.Lease, at time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: l.TaskID, Token: l.Token, At: at, Lease: &l, Events: events(evs)}
}

// Orphan requeues a live task whose holder is gone (token 0 when its lease
// row is already gone, which the write then requires: Unleased), without
// counting the attempt in progress.
func Orphan(id task.ID, from task.State, token int64, at time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActRequeue, From: from, Token: token, Unleased: token == 0, At: at, Events: events(evs),
		Edit: func(n *task.Task) {
			n.Reason = string(task.ReasonLeaseOrphaned)
			if n.Attempt > 0 {
				n.Attempt--
			}
		}}
}

// Requeue puts a task back in the queue with reason, releasing its lease;
// countAttempt false gives the attempt back.
func Requeue(id task.ID, from task.State, token int64, at time.Time, reason task.Reason, countAttempt bool, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActRequeue, From: from, Token: token, At: at, Events: events(evs),
		Edit: func(n *task.Task) {
			n.Reason = string(reason)
			if !countAttempt && n.Attempt > 0 {
				n.Attempt--
			}
		}}
}

// Seal requeues a task whose session sealed its phase's artifact, at the
// next phase with a fresh attempt budget, releasing the lease.
func Seal(id task.ID, from task.State, token int64, at time.Time, next task.Phase, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActRequeue, From: from, Token: token, At: at, Events: events(evs),
		Edit: func(n *task.Task) { n.Phase, n.Attempt, n.Reason = next, 0, "" }}
}

// Finish moves a running task whose final verify gate is green to
// awaiting-review, releasing the lease.
func Finish(id task.ID, token int64, at time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActAwait, From: task.StateRunning, Token: token, At: at, Events: events(evs)}
}

// Approve completes a task awaiting review. It holds no lease; token is
// the task's token as the writer read it (TaskToken), so of two approvals
// the second is refused as stale.
func Approve(id task.ID, token int64, at time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActApprove, From: task.StateAwaitingReview, Token: token, At: at, Events: events(evs)}
}

// Retry queues a failed or cancelled task again from the state the writer
// saw, with a fresh attempt budget; token as for Approve.
func Retry(id task.ID, from task.State, token int64, at time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActRetry, From: from, Token: token, At: at, Events: events(evs),
		Edit: func(n *task.Task) { n.Attempt, n.Reason = 0, "" }}
}

// Cancel ends a task for the operator, releasing a lease held under token.
func Cancel(id task.ID, from task.State, token int64, at time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActCancel, From: from, Token: token, At: at, Events: events(evs)}
}

// Move is any other action (park, unpark, fail, a rework's requeue) from
// the state the writer saw, with an edit of the coordinator-owned fields.
func Move(id task.ID, from task.State, a task.Action, token int64, at time.Time, edit func(*task.Task), evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: a, From: from, Token: token, At: at, Edit: edit, Events: events(evs)}
}

// Lease leases one queued task to holder, fenced by the token the writer
// read with it (so of two engines leasing it at once the second finds its
// token stale), counting the attempt; LeaseClaim is the same transition on
// the first claimable of several.
func Lease(id task.ID, token int64, holder string, at, deadline time.Time, evs ...task.Event) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActLease, From: task.StateQueued, Token: token, At: at,
		Grant: &LeaseTerms{Holder: holder, Deadline: deadline, Baseline: lease.Progress{At: at}}, Events: events(evs),
		Edit: func(n *task.Task) { n.Attempt, n.Reason = n.Attempt+1, "" }}
}

// Transition is the ActLease transition of the candidate id a claim took.
func (p LeaseClaimParams) Transition(id task.ID) TaskTransitionParams {
	return TaskTransitionParams{TaskID: id, Action: task.ActLease, From: task.StateQueued, At: p.GrantedAt,
		Grant: &LeaseTerms{Holder: p.Holder, Deadline: p.Deadline, Baseline: lease.Progress{At: p.GrantedAt}}, Edit: p.Edit, Events: p.Events}
}

// Transition is the ActLease transition of a grant.
func (p LeaseGrantParams) Transition() TaskTransitionParams {
	return TaskTransitionParams{TaskID: p.TaskID, Action: task.ActLease, From: p.ExpectState, At: p.GrantedAt,
		Grant: &LeaseTerms{Holder: p.Holder, Deadline: p.Deadline, Baseline: p.Baseline}, Events: events(p.Events)}
}
