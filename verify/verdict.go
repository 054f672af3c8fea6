// Package verify is the verify gate: it re-runs the project's own tests and
// turns the result into a verdict. The agent's word is never the verdict.
package verify

import "github.com/orchestra-tui/orchestra-tui/task"

// Status is the outcome class of a verify run. The verdict's records live in
// the contracts package (task), so the store can keep them without importing
// the gate; these names stay so callers need not change.
type Status = task.VerdictStatus

// Verdict statuses.
const (
	StatusOK         = task.VerdictOK
	StatusIncomplete = task.VerdictIncomplete
	StatusError      = task.VerdictError
)

// Verdict is the result of one verify run.
type Verdict = task.Verdict

// BaselineDetail is the Detail of a baseline verdict (task.BaselineDetail).
const BaselineDetail = task.BaselineDetail
