package task

import "fmt"

// Reason is a constant naming why something was refused or why a task moved.
// Every reason the code can produce is listed in Reasons and has an
// operator-facing sentence; a test checks both halves agree.
type Reason string

// Refusal and cause reasons.
const (
	ReasonArtifactMissing    Reason = "artifact-missing"
	ReasonArtifactNotJSON    Reason = "artifact-not-json"
	ReasonArtifactSchema     Reason = "artifact-schema"
	ReasonArtifactTooLarge   Reason = "artifact-too-large"
	ReasonArtifactSymlink    Reason = "artifact-symlink"
	ReasonArtifactOutside    Reason = "artifact-outside-worktree"
	ReasonArtifactNotFile    Reason = "artifact-not-regular-file"
	ReasonLaunchFailed       Reason = "launch-failed"
	ReasonLaunchNotConfirmed Reason = "launch-not-confirmed"
	ReasonSessionExited      Reason = "session-exited"
	ReasonRenewalNoProgress  Reason = "renewal-no-progress"
	ReasonRenewalCap         Reason = "renewal-cap-reached"
	ReasonLeaseExpired       Reason = "lease-expired"
	ReasonLeaseExpiredByHand Reason = "lease-expired-by-operator"
	ReasonLeaseOrphaned      Reason = "lease-orphaned"
	ReasonStaleLeaseToken    Reason = "stale-lease-token"
	ReasonDeliveryFailed     Reason = "delivery-failed"
	ReasonVerifyError        Reason = "verify-error"
	ReasonVerifyFailing      Reason = "verify-failing"
	ReasonUnplaceable        Reason = "unplaceable"
	ReasonAttemptsExhausted  Reason = "attempts-exhausted"
	ReasonIllegalTransition  Reason = "illegal-transition"
	ReasonStuck              Reason = "stuck"
	ReasonResubmitCap        Reason = "resubmit-cap-reached"
	ReasonWorktreeFailed     Reason = "worktree-failed"
	ReasonNotGitRepo         Reason = "not-a-git-repository"
	ReasonNoVerifyCommand    Reason = "no-verify-command"
	ReasonUnknownPhase       Reason = "unknown-phase"
	ReasonHandoffInvalid     Reason = "handoff-invalid"
	ReasonHandoffForeignRepo Reason = "handoff-foreign-repository"
	ReasonForkFingerprint    Reason = "fork-fingerprint-mismatch"
	ReasonCommitFailed       Reason = "commit-failed"
	ReasonArtifactNotSealed  Reason = "artifact-not-sealed"
	ReasonInputNotAccepted   Reason = "input-not-accepted"
	ReasonPathOutside        Reason = "path-outside-worktree"
	ReasonMergeConflict      Reason = "merge-conflict"
	ReasonMergeRefused       Reason = "merge-refused"
	ReasonPushFailed         Reason = "push-failed"
	ReasonArtifactStale      Reason = "artifact-not-this-session"
	ReasonStoreFailed        Reason = "store-failed"
	ReasonBranchForeign      Reason = "branch-foreign-repository"
	ReasonFetchFailed        Reason = "fetch-failed"
	// ReasonForgeNotAllowed: a forge comment by a user who may not
	// correct the task (not in [source] users, or no write access).
	ReasonForgeNotAllowed Reason = "forge-comment-not-allowed"
)

// Reasons lists every reason, for tests that enumerate them.
var Reasons = []Reason{
	ReasonArtifactMissing, ReasonArtifactNotJSON, ReasonArtifactSchema, ReasonArtifactTooLarge,
	ReasonArtifactSymlink, ReasonArtifactOutside, ReasonArtifactNotFile, ReasonLaunchFailed,
	ReasonLaunchNotConfirmed, ReasonSessionExited, ReasonRenewalNoProgress, ReasonRenewalCap,
	ReasonLeaseExpired, ReasonLeaseExpiredByHand, ReasonLeaseOrphaned, ReasonStaleLeaseToken,
	ReasonDeliveryFailed, ReasonVerifyError, ReasonVerifyFailing, ReasonUnplaceable,
	ReasonAttemptsExhausted, ReasonIllegalTransition, ReasonStuck, ReasonResubmitCap,
	ReasonWorktreeFailed, ReasonNotGitRepo, ReasonNoVerifyCommand, ReasonUnknownPhase,
	ReasonHandoffInvalid, ReasonHandoffForeignRepo, ReasonForkFingerprint, ReasonCommitFailed,
	ReasonArtifactNotSealed, ReasonPathOutside, ReasonMergeConflict, ReasonMergeRefused, ReasonPushFailed,
	ReasonArtifactStale, ReasonStoreFailed, ReasonInputNotAccepted, ReasonBranchForeign,
	ReasonFetchFailed, ReasonForgeNotAllowed,
}

var sentences = map[Reason]string{
	ReasonArtifactMissing:    "The phase's artifact file was not written.",
	ReasonArtifactNotJSON:    "The artifact is not valid JSON.",
	ReasonArtifactSchema:     "The artifact does not follow its schema.",
	ReasonArtifactTooLarge:   "The artifact is larger than the size cap.",
	ReasonArtifactSymlink:    "The artifact is a symbolic link; only a regular file is accepted.",
	ReasonArtifactOutside:    "The artifact resolves outside the task's worktree.",
	ReasonArtifactNotFile:    "The artifact path is not a regular file.",
	ReasonLaunchFailed:       "The agent program could not be started.",
	ReasonLaunchNotConfirmed: "The agent never showed its ready prompt and settled, so the brief was not delivered.",
	ReasonSessionExited:      "The agent process exited before finishing its phase.",
	ReasonRenewalNoProgress:  "The lease was not renewed: the pane made no real progress since the last renewal.",
	ReasonRenewalCap:         "The lease was not renewed: the cap on renewals was reached.",
	ReasonLeaseExpired:       "The lease ran out; the session was stopped and the task requeued.",
	ReasonLeaseExpiredByHand: "The operator expired the lease; the session was stopped and the task requeued.",
	ReasonLeaseOrphaned:      "The lease's holder is gone (its engine stopped or its machine was lost); the task was requeued.",
	ReasonStaleLeaseToken:    "A write came from a session whose lease was taken away, and was refused.",
	ReasonDeliveryFailed:     "Input could not be delivered to the agent's pane.",
	ReasonVerifyError:        "The verify command could not run to completion.",
	ReasonVerifyFailing:      "The project's tests are failing.",
	ReasonUnplaceable:        "No worker slot offers what this task needs.",
	ReasonAttemptsExhausted:  "The task used all its attempts and failed.",
	ReasonIllegalTransition:  "The task cannot make that move from its current state.",
	ReasonStuck:              "The pane has not changed for too long while its phase is unfinished.",
	ReasonResubmitCap:        "The pane stayed stuck after the maximum number of automatic resubmits.",
	ReasonWorktreeFailed:     "The task's git worktree could not be prepared.",
	ReasonNotGitRepo:         "The directory is not a git repository.",
	ReasonNoVerifyCommand:    "The task has no verify command.",
	ReasonUnknownPhase:       "The pipeline names a phase that does not exist.",
	ReasonHandoffInvalid:     "The handoff file is malformed or was edited by hand.",
	ReasonHandoffForeignRepo: "The handoff belongs to a different repository.",
	ReasonForkFingerprint:    "The fork's launch fingerprint differs from its base, which would lose the prompt cache.",
	ReasonCommitFailed:       "The task's work could not be committed to its branch.",
	ReasonArtifactNotSealed:  "The finished phase's artifact could not be stored; the session was stopped and the phase runs again.",
	ReasonInputNotAccepted:   "The agent did not take the input: after the submit key and its re-sends the screen still shows it waiting.",
	ReasonPathOutside:        "A path in the task's worktree leads outside it (a symlink); the console touched nothing there.",
	ReasonStoreFailed:        "The store failed.",
	ReasonArtifactStale:      "The artifact may not be this session's work (written before it started, or while a process of an older session was alive); it was not sealed.",
	ReasonMergeConflict:      "The task's branch conflicts with the base branch; nothing was merged and the repository is unchanged.",
	ReasonMergeRefused:       "The task's branch was not merged.",
	ReasonPushFailed:         "The task's branch could not be pushed or its pull request opened.",
	ReasonBranchForeign:      "The task's branch on the remote belongs to another repository; it was not checked out.",
	ReasonFetchFailed:        "The task's branch could not be fetched from the remote; the session starts from what this clone has.",
	ReasonForgeNotAllowed:    "A comment on the task's issue is not from a user allowed to correct it; it was not delivered.",
}

// Sentence returns the operator-facing sentence for r. An unknown reason
// still yields a sentence that names it, so nothing is ever shown blank.
func (r Reason) Sentence() string {
	if s, ok := sentences[r]; ok {
		return s
	}
	return fmt.Sprintf("Refused (%s).", string(r))
}

// Known reports whether r has a sentence of its own.
func (r Reason) Known() bool {
	_, ok := sentences[r]
	return ok
}

// Refusal is an error that carries a reason constant and the detail that
// names the file, field or rule involved. Engine code returns it; the
// coordinator turns it into a refusal event.
type Refusal struct {
	Reason Reason
	Detail string
}

func (r *Refusal) Error() string {
	if r.Detail == "" {
		return r.Reason.Sentence()
	}
	return r.Reason.Sentence() + " " + r.Detail
}

// Refuse builds a *Refusal with a formatted detail.
func Refuse(reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}
