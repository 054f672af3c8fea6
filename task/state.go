package task

import (
	"fmt"
	"time"
)

// State is where a task is in its lifecycle. Only the coordinator moves a task
// between states, and only through Apply.
//
//	              ┌──────── unpark ────────┐
//	              ▼                        │
//	add ──▶ queued ──lease──▶ leased ──confirm──▶ running ──review green──▶ awaiting-review ──approve──▶ completed
//	         ▲  │                │                  │  │                         │
//	         │  └─park─▶ parked ◀┴──────park────────┘  │                         └─rework─▶ queued
//	         │                                         │
//	         └──── requeue (lease expired, launch refused, phase advanced) ◀──────┘
//
//	any live state ──cancel──▶ cancelled        leased/running ──fail──▶ failed
//	failed/cancelled ──retry (operator)──▶ queued, with a fresh attempt budget
type State string

// The task states.
const (
	StateQueued         State = "queued"          // waiting for a slot
	StateLeased         State = "leased"          // a slot holds the lease; the session is launching
	StateRunning        State = "running"         // a confirmed session is working on the current phase
	StateParked         State = "parked"          // held by the operator; no session runs
	StateAwaitingReview State = "awaiting-review" // the verify gate is green; waits for human approval
	StateCompleted      State = "completed"       // approved by a human
	StateFailed         State = "failed"          // gave up: attempts exhausted or an unrecoverable error
	StateCancelled      State = "cancelled"       // stopped by the operator
)

// States lists every state, live ones first.
var States = []State{StateQueued, StateLeased, StateRunning, StateParked, StateAwaitingReview, StateCompleted, StateFailed, StateCancelled}

// Terminal reports whether the task has ended: no session runs for it and
// nothing but the operator's retry (of a failed or cancelled task) moves it
// out of s again.
func (s State) Terminal() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled || s == StateMerged
}

// Live reports whether a session may be running for a task in s.
func (s State) Live() bool { return s == StateLeased || s == StateRunning }

// Action is what the coordinator wants to do to a task.
type Action string

// The actions the transition function knows.
const (
	ActLease   Action = "lease"   // queued → leased: a slot took the task
	ActConfirm Action = "confirm" // leased → running: the session's launch was confirmed
	ActRequeue Action = "requeue" // leased/running/awaiting-review → queued: expiry, refusal, phase advance or rework
	ActPark    Action = "park"    // queued/leased/running → parked: the operator holds it
	ActUnpark  Action = "unpark"  // parked → queued
	ActAwait   Action = "await"   // running → awaiting-review: the final verify gate is green
	ActApprove Action = "approve" // awaiting-review → completed
	ActFail    Action = "fail"    // leased/running/queued → failed
	ActCancel  Action = "cancel"  // any non-terminal → cancelled
	ActRetry   Action = "retry"   // failed/cancelled → queued: the operator tries again
)

var transitions = map[State]map[Action]State{
	StateQueued:         {ActLease: StateLeased, ActPark: StateParked, ActFail: StateFailed, ActCancel: StateCancelled},
	StateLeased:         {ActConfirm: StateRunning, ActRequeue: StateQueued, ActPark: StateParked, ActFail: StateFailed, ActCancel: StateCancelled},
	StateRunning:        {ActRequeue: StateQueued, ActPark: StateParked, ActAwait: StateAwaitingReview, ActFail: StateFailed, ActCancel: StateCancelled},
	StateParked:         {ActUnpark: StateQueued, ActCancel: StateCancelled},
	StateAwaitingReview: {ActApprove: StateCompleted, ActRequeue: StateQueued, ActCancel: StateCancelled},
	StateFailed:         {ActRetry: StateQueued},
	StateCancelled:      {ActRetry: StateQueued},
}

// TransitionError is returned by Apply for a move the lifecycle forbids.
type TransitionError struct {
	From   State
	Action Action
}

func (e *TransitionError) Error() string {
	if e.From.Terminal() && e.Action != ActRetry {
		return fmt.Sprintf("cannot %s a %s task: it has ended", e.Action, e.From)
	}
	if e.Action == ActRetry {
		return fmt.Sprintf("cannot retry a task that is %s: only a failed or cancelled task can be retried", e.From)
	}
	return fmt.Sprintf("cannot %s a task that is %s", e.Action, e.From)
}

// Apply is the one transition function: it returns the state that action a
// leads to from s, or a *TransitionError when the move is illegal. It is pure.
func Apply(s State, a Action) (State, error) {
	if next, ok := transitions[s][a]; ok {
		return next, nil
	}
	return s, &TransitionError{From: s, Action: a}
}

// Begin makes t a new task: queued at attempt 0, created now. A task's
// life starts here, the one state set outside Apply (no state precedes it).
func (t *Task) Begin(now time.Time) {
	t.State, t.Attempt, t.CreatedAt, t.UpdatedAt = StateQueued, 0, now, now
}

// Allowed lists the actions legal from s, for help text and the UI.
func Allowed(s State) []Action {
	var out []Action
	for _, a := range append([]Action{ActLease, ActConfirm, ActRequeue, ActPark, ActUnpark, ActAwait, ActApprove, ActFail, ActCancel, ActRetry}, mergeActions...) {
		if _, ok := transitions[s][a]; ok {
			out = append(out, a)
		}
	}
	return out
}
