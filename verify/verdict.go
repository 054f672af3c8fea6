// Package verify is the verify gate: it re-runs the project's own tests and
// turns the result into a verdict. The agent's word is never the verdict.
package verify

import "time"

// Status is the outcome class of a verify run.
type Status string

// Verdict statuses.
const (
	StatusOK         Status = "ok"         // the tests ran and passed
	StatusIncomplete Status = "incomplete" // the tests ran and failed
	StatusError      Status = "error"      // the tests could not run: command missing, timed out
)

// Verdict is the result of one verify run.
type Verdict struct {
	Status   Status        `json:"status"`
	Command  string        `json:"command"`
	ExitCode int           `json:"exit_code"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Skipped  int           `json:"skipped"`
	Counted  bool          `json:"counted"` // a summary line was recognised
	Tail     string        `json:"tail"`    // the last part of the output
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration"`
	At       time.Time     `json:"at"`
}
