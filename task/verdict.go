package task

import (
	"fmt"
	"strings"
	"time"
)

// VerdictStatus is the outcome class of a verify run.
type VerdictStatus string

// Verdict statuses.
const (
	VerdictOK         VerdictStatus = "ok"         // the tests ran and passed
	VerdictIncomplete VerdictStatus = "incomplete" // the tests ran and failed
	VerdictError      VerdictStatus = "error"      // the tests could not run: command missing, timed out
)

// Verdict is the result of one verify run (the verify package runs it; the
// store keeps it and the brief, the console and the handoff read it).
type Verdict struct {
	Status   VerdictStatus `json:"status"`
	Command  string        `json:"command"`
	ExitCode int           `json:"exit_code"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Skipped  int           `json:"skipped"`
	Counted  bool          `json:"counted"` // a summary line was recognised
	Tail     string        `json:"tail"`    // the last part of the output
	// OutputBytes is how much the command printed in all, so a reader of
	// Tail can tell how much was left out.
	OutputBytes int64         `json:"output_bytes"`
	Detail      string        `json:"detail,omitempty"`
	Duration    time.Duration `json:"duration"`
	At          time.Time     `json:"at"`
}

// BaselineDetail is the Detail of a baseline verdict: the tests run before
// a task changed anything. Kept in Detail, which every store keeps with a
// task's latest verdict, so a list read back from the store still tells a
// baseline from the task's own result.
const BaselineDetail = "baseline: the tests before any change"

// Baseline reports whether v is a baseline verdict, not a task's result.
func (v Verdict) Baseline() bool { return v.Detail == BaselineDetail }

// Line renders the verdict on one line for panes, lists and briefs:
// "✓ ok · tests green (12 passed)", "✗ incomplete · tests failing
// (3 passed, 1 failed)", "✗ error · timed out after 5m0s; …".
func (v Verdict) Line() string {
	if v.Baseline() && v.Status != VerdictError {
		// Not the task's result: the tests as they were before it began.
		if v.Status == VerdictOK {
			return "baseline · tests green before any change" + v.counts()
		}
		return "baseline · tests failing before any change" + v.counts()
	}
	switch v.Status {
	case VerdictOK:
		return "✓ ok · tests green" + v.counts()
	case VerdictIncomplete:
		return "✗ incomplete · tests failing" + v.counts()
	case VerdictError:
		d := strings.Join(strings.Fields(v.Detail), " ")
		if d == "" {
			d = "the tests could not run"
		}
		return "✗ error · " + d
	case "":
		return "· no verdict yet"
	default:
		return fmt.Sprintf("? %s", v.Status)
	}
}

// counts renders " (3 passed, 1 failed, 2 skipped)" when a summary line was
// recognised, leaving out zero failed and skipped counts.
func (v Verdict) counts() string {
	if !v.Counted {
		return ""
	}
	parts := []string{fmt.Sprintf("%d passed", v.Passed)}
	if v.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", v.Failed))
	}
	if v.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", v.Skipped))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
