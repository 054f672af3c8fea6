package task

import (
	"encoding/json"
	"time"
)

// Kind names an event in the ledger. The UI, `status` and the headless log are
// all views of these rows, so every kind the engine writes is listed here.
type Kind string

// Event kinds.
const (
	EvTaskAdded         Kind = "task.added"
	EvTaskLeased        Kind = "task.leased"
	EvTaskRequeued      Kind = "task.requeued"
	EvTaskParked        Kind = "task.parked"
	EvTaskUnparked      Kind = "task.unparked"
	EvTaskAwaiting      Kind = "task.awaiting-review"
	EvTaskCompleted     Kind = "task.completed"
	EvTaskFailed        Kind = "task.failed"
	EvTaskCancelled     Kind = "task.cancelled"
	EvSessionLaunched   Kind = "session.launched"
	EvSessionConfirmed  Kind = "session.confirmed"
	EvSessionExited     Kind = "session.exited"
	EvSessionStuck      Kind = "session.stuck"
	EvSessionAdopted    Kind = "session.adopted"  // a restarted engine took up a session its session host kept running
	EvSessionDetached   Kind = "session.detached" // an engine stopped and left the session running in its host for the next one
	EvBriefDelivered    Kind = "brief.delivered"
	EvResubmitted       Kind = "session.resubmitted"
	EvArtifactSealed    Kind = "artifact.sealed"
	EvPhaseAdvanced     Kind = "phase.advanced"
	EvVerifyStarted     Kind = "verify.started"
	EvVerifyFinished    Kind = "verify.finished"
	EvLeaseRenewed      Kind = "lease.renewed"
	EvLeaseExtended     Kind = "lease.extended"
	EvLeaseExpired      Kind = "lease.expired"
	EvDecisionRecorded  Kind = "decision.recorded"
	EvDecisionDelivered Kind = "decision.delivered"
	EvDeadEnd           Kind = "dead-end.recorded"
	EvUsage             Kind = "session.usage"
	EvRefusal           Kind = "refusal" // always carries a Reason

	// EvBasePolicy records what the console did about a trained base's
	// prompt cache (pinged it warm, retrained it, let it expire, retired
	// it), with the keep-warm policy's reason.
	EvBasePolicy Kind = "base.policy"

	// The end of the loop: what happened to a task's branch after its
	// work was committed.
	EvTaskRetried  Kind = "task.retried"  // a failed or cancelled task queued again by the operator
	EvBranchMerged Kind = "branch.merged" // the task's branch merged into the base branch
	EvBranchPushed Kind = "branch.pushed" // pushed to the remote, with the pull request if one was opened
	EvBranchPruned Kind = "branch.pruned" // its worktree and branch removed

	// EvNotifyFailed says the `[notify] command` failed for an event that
	// needed a human, so the operator knows the alert did not go out.
	EvNotifyFailed Kind = "notify.failed"

	// EvStoreRecovered says a network store answers again after an
	// outage: placement resumes, and the events held meanwhile were
	// appended.
	EvStoreRecovered Kind = "store.recovered"
)

// Kinds lists every event kind, for tests that enumerate them.
var Kinds = []Kind{
	EvTaskAdded, EvTaskLeased, EvTaskRequeued, EvTaskParked, EvTaskUnparked, EvTaskAwaiting,
	EvTaskCompleted, EvTaskFailed, EvTaskCancelled, EvSessionLaunched, EvSessionConfirmed,
	EvSessionExited, EvSessionStuck, EvBriefDelivered, EvResubmitted, EvArtifactSealed,
	EvPhaseAdvanced, EvVerifyStarted, EvVerifyFinished, EvLeaseRenewed, EvLeaseExtended,
	EvLeaseExpired, EvDecisionRecorded, EvDecisionDelivered, EvDeadEnd, EvUsage, EvRefusal, EvBasePolicy,
	EvTaskRetried, EvBranchMerged, EvBranchPushed, EvBranchPruned, EvNotifyFailed, EvSessionAdopted, EvSessionDetached,
	EvStoreRecovered,
}

// Event is one append-only ledger row.
type Event struct {
	ID        string          `json:"id"`  // ULID
	Seq       int64           `json:"seq"` // ledger position, assigned by the store
	TaskID    ID              `json:"task_id"`
	SessionID string          `json:"session_id,omitempty"`
	Kind      Kind            `json:"kind"`
	Reason    Reason          `json:"reason,omitempty"` // set on refusals and on events that have a cause
	Text      string          `json:"text"`             // one operator-facing sentence
	Data      json.RawMessage `json:"data,omitempty"`   // kind-specific facts
	At        time.Time       `json:"at"`
}

// IsRefusal reports whether the event records something the system declined
// to do, which the UI highlights.
func (e Event) IsRefusal() bool { return e.Kind == EvRefusal }
