// Package lease holds the lease value and the pure renewal policy: a task's
// right to run, with a deadline, renewed only on real progress.
package lease

import (
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Progress is a sample of what a session has done, compared between renewals.
type Progress struct {
	Screen    string    `json:"screen"`    // fingerprint of the screen with volatile parts masked
	Worktree  string    `json:"worktree"`  // fingerprint of the worktree's changed files
	Artifacts int       `json:"artifacts"` // number of artifacts present
	At        time.Time `json:"at"`
}

// Lease is a task's right to run. It is a value: the policy computes a new
// one; the store persists it, fenced by Token.
type Lease struct {
	TaskID    task.ID   `json:"task_id"`
	Holder    string    `json:"holder"` // the worker slot and console instance holding it
	Token     int64     `json:"token"`  // fencing token: grows by one on every grant for the task
	GrantedAt time.Time `json:"granted_at"`
	Deadline  time.Time `json:"deadline"`
	Renewals  int       `json:"renewals"`
	// Baseline is the progress sample taken at launch or at the last renewal;
	// the next renewal needs progress beyond it.
	Baseline Progress `json:"baseline"`
	// LastProgressAt is the time of the newest sample that showed progress
	// beyond Baseline (see Decide): a simple, sample-granular "last seen
	// working" for the operator.
	LastProgressAt time.Time `json:"last_progress_at"`
	// LastDecision and LastReason record the policy's most recent verdict.
	LastDecision string      `json:"last_decision,omitempty"`
	LastReason   task.Reason `json:"last_reason,omitempty"`
}
