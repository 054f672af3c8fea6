package task

// ---- Pull requests ([finalise] pr): states, actions, events. ----
//
// Kept in this file, as the merge queue's block is, so it can change
// without touching the transition table others edit.
//
//	awaiting-review ──open-pr (approve)──▶ pr-open ──land (merged on the forge)──▶ merged
//	pr-open ──requeue (a review requested changes)──▶ queued (implement, no attempt charged)
//	pr-open ──hold (closed unmerged on the forge)──▶ awaiting-review

// StatePullOpen is a task approved with [finalise] pr: its branch is
// pushed and its pull request is open on the forge, where the team
// reviews and merges it.
const StatePullOpen State = "pr-open"

// ActOpenPR is approve with [finalise] pr: awaiting-review → pr-open.
const ActOpenPR Action = "open-pr"

// The pull request's event kinds. Their Data is a PullData.
const (
	EvPullOpened  Kind = "pr.opened"  // pushed, and the pull request opened (or found open)
	EvPullUpdated Kind = "pr.updated" // its checks or reviews changed, or it closed
)

// PullData is the Data of the pull request's events: what the task row
// shows of it.
type PullData struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	Open   bool   `json:"open"`
	Merged bool   `json:"merged"`
	Checks string `json:"checks,omitempty"` // "pending", "success", "failure"; "" without checks
	Review string `json:"review,omitempty"` // "changes_requested", "approved" or ""
}

func init() {
	add := map[State]map[Action]State{
		StateAwaitingReview: {ActOpenPR: StatePullOpen},
		StatePullOpen:       {ActLand: StateMerged, ActRequeue: StateQueued, ActHold: StateAwaitingReview, ActCancel: StateCancelled},
	}
	for s, m := range add {
		if transitions[s] == nil {
			transitions[s] = map[Action]State{}
		}
		for a, to := range m {
			transitions[s][a] = to
		}
	}
	mergeActions = append(mergeActions, ActOpenPR)
	States = append(States, StatePullOpen)
	Kinds = append(Kinds, EvPullOpened, EvPullUpdated)
}

// ---- end of the pull request block ----
