package task

// ---- The merge queue's states, actions, events and reasons. ----
//
// Kept in this file, apart from the rest of the lifecycle, so the queue can
// change without touching the transition table others edit. init adds them
// to the table, the lists and the sentences; Apply is still the one
// transition function.
//
//	awaiting-review ──approve ([finalise] queue)──▶ merge-queued ──integrate──▶ integrating ──land──▶ merged
//	completed ──land (merge without the queue)──▶ merged
//	completed ──queue-merge (merge)──▶ merge-queued         integrating ──return──▶ queued (implement, no attempt charged)
//	integrating ──unqueue──▶ merge-queued (the engine stopped mid-way, or the base moved under it)
//	integrating ──hold──▶ awaiting-review (git failed, not the work: the operator decides)

// The merge queue's states.
const (
	StateMergeQueued State = "merge-queued" // approved; waits its turn in the merge queue
	StateIntegrating State = "integrating"  // the queue merges it onto the base and re-runs its tests
	StateMerged      State = "merged"       // on the base branch, its tests green there
)

// The merge queue's actions.
const (
	ActQueueMerge Action = "queue-merge" // awaiting-review/completed → merge-queued
	ActIntegrate  Action = "integrate"   // merge-queued → integrating: the queue took it
	ActLand       Action = "land"        // integrating → merged: the base moved to the green integrated tree
	ActReturn     Action = "return"      // integrating → queued: a conflict or a red integrated run; back to implement
	ActUnqueue    Action = "unqueue"     // integrating → merge-queued: integrate again later
	ActHold       Action = "hold"        // integrating → awaiting-review: git failed; the operator decides
)

// mergeActions are the queue's actions, in the order Allowed lists them.
var mergeActions = []Action{ActQueueMerge, ActIntegrate, ActLand, ActReturn, ActUnqueue, ActHold}

// The merge queue's event kinds.
const (
	EvMergeQueued   Kind = "merge.queued"   // approved (or merged by hand) into the queue
	EvMergeStarted  Kind = "merge.started"  // the queue integrates it onto the base
	EvMergeReturned Kind = "merge.returned" // a conflict or red tests sent it back to implement
)

// The merge queue's refusal reasons.
const (
	ReasonIntegrationRed Reason = "integration-red" // the tests fail on the base with the branch merged
	ReasonBaseBusy       Reason = "base-checkout-dirty"
)

func init() {
	add := map[State]map[Action]State{
		StateAwaitingReview: {ActQueueMerge: StateMergeQueued},
		StateCompleted:      {ActQueueMerge: StateMergeQueued, ActLand: StateMerged},
		StateMergeQueued:    {ActIntegrate: StateIntegrating, ActCancel: StateCancelled},
		StateIntegrating:    {ActLand: StateMerged, ActReturn: StateQueued, ActUnqueue: StateMergeQueued, ActHold: StateAwaitingReview, ActCancel: StateCancelled},
	}
	for s, m := range add {
		if transitions[s] == nil {
			transitions[s] = map[Action]State{}
		}
		for a, to := range m {
			transitions[s][a] = to
		}
	}
	States = append(States, StateMergeQueued, StateIntegrating, StateMerged)
	Kinds = append(Kinds, EvMergeQueued, EvMergeStarted, EvMergeReturned)
	Reasons = append(Reasons, ReasonIntegrationRed, ReasonBaseBusy)
	sentences[ReasonIntegrationRed] = "The tests fail once the task's branch is merged onto the current base; the base was not moved."
	sentences[ReasonBaseBusy] = "The base branch is checked out with uncommitted changes; the merge queue waits rather than move it under them."
}

// InMergeQueue reports whether s is one of the queue's own live states: the
// work was approved and the queue has not finished with it.
func (s State) InMergeQueue() bool { return s == StateMergeQueued || s == StateIntegrating }

// ---- end of the merge queue block ----
