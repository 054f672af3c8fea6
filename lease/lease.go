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
	// CPU is the CPU time the session's process tree has used since its
	// launch, where it can be measured (its cgroup's cpu.stat, else the
	// tree's times in /proc); zero where it cannot. It never decreases.
	CPU time.Duration `json:"cpu,omitempty"`
	// Working is the CPU time the tree used in the CPUWindow before At
	// when that is work (Working), zero otherwise; Still is how long the
	// screen (volatile parts masked) had not changed at At. Both are for
	// display ("working: 42 s CPU in the last minute"), not stored.
	Working time.Duration `json:"-"`
	Still   time.Duration `json:"-"`
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
