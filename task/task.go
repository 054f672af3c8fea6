// Package task holds the nouns every other package agrees on: tasks, phases,
// states and the one transition function, the artifact schemas, the sentinel
// path, event kinds and refusal reasons. A name that two halves of the system
// must agree on is defined here, once, and both halves import it.
package task

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// ID identifies a task. It is a ULID: unique and sortable by creation time.
type ID string

// NewID returns a fresh sortable unique id stamped with t.
func NewID(t time.Time) ID {
	return ID(NewULID(t))
}

// NewULID returns a fresh ULID string for rows other than tasks (events,
// decisions, sessions), so every id in the system sorts by time. Ids made
// in one process in one millisecond sort in the order they were made
// (ulid's monotonic entropy): a session's process sweep spares every later
// session of its task by that order (session.StopMarked).
func NewULID(t time.Time) string {
	return ulid.MustNew(ulid.Timestamp(t), ulid.DefaultEntropy()).String()
}

// Short returns the last eight characters of the id: the random part, which is
// what an operator can tell apart at a glance in a list.
func (id ID) Short() string {
	s := string(id)
	if len(s) <= 8 {
		return s
	}
	return s[len(s)-8:]
}

// Task is one unit of work handed to agents.
type Task struct {
	ID           ID       `json:"id"`
	Title        string   `json:"title"`
	Goal         string   `json:"goal"`
	Acceptance   []string `json:"acceptance"`
	Verify       string   `json:"verify"` // the verify command, run by sh -c in the worktree
	Repo         string   `json:"repo"`   // repository root the task belongs to
	Pipeline     Pipeline `json:"pipeline"`
	Harness      string   `json:"harness"`
	Model        string   `json:"model,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	// Signature is the fleet key's HMAC over the spec above (package
	// sign): an engine runs nothing of a task whose signature it cannot
	// check, so an edit of the row in the store cannot run code.
	Signature string `json:"signature,omitempty"`

	// The fields below are owned by the coordinator.
	State      State     `json:"state"`
	Phase      Phase     `json:"phase"`
	Attempt    int       `json:"attempt"` // attempts of the current phase, 0 before the first launch
	BaseCommit string    `json:"base_commit,omitempty"`
	Branch     string    `json:"branch,omitempty"`
	Reason     string    `json:"reason,omitempty"` // why the task is in its state (failed, parked, unplaceable)
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Validation errors for a task as submitted by an operator.
var (
	ErrNoGoal   = errors.New("task has no goal")
	ErrNoVerify = errors.New("task has no verify command: the verify gate needs the project's own tests to decide when it is done")
	ErrNoTitle  = errors.New("task has no title")
)

// Validate checks what an operator must give for a task to be runnable.
func (t Task) Validate() error {
	var errs []error
	if strings.TrimSpace(t.Title) == "" {
		errs = append(errs, ErrNoTitle)
	}
	if strings.TrimSpace(t.Goal) == "" {
		errs = append(errs, ErrNoGoal)
	}
	if strings.TrimSpace(t.Verify) == "" {
		errs = append(errs, ErrNoVerify)
	}
	if err := t.Pipeline.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := CheckSizes(t.Title, t.Goal, t.Acceptance); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Phase is one step of a task's pipeline.
type Phase string

// The phases, in their canonical order.
const (
	PhaseFrame     Phase = "frame"
	PhaseResearch  Phase = "research"
	PhasePlan      Phase = "plan"
	PhaseImplement Phase = "implement"
	PhaseReview    Phase = "review"
)

// Phases lists every phase in canonical order.
var Phases = []Phase{PhaseFrame, PhaseResearch, PhasePlan, PhaseImplement, PhaseReview}

// Valid reports whether p is a known phase.
func (p Phase) Valid() bool {
	for _, q := range Phases {
		if p == q {
			return true
		}
	}
	return false
}

// ParsePhase returns the phase named s or an error naming the known ones.
func ParsePhase(s string) (Phase, error) {
	p := Phase(strings.TrimSpace(strings.ToLower(s)))
	if !p.Valid() {
		return "", fmt.Errorf("unknown phase %q (known: frame, research, plan, implement, review)", s)
	}
	return p, nil
}

// Pipeline is the ordered list of phases a task runs through.
type Pipeline []Phase

// DefaultPipeline is every phase, in order.
func DefaultPipeline() Pipeline { return append(Pipeline(nil), Phases...) }

// ParsePipeline parses a comma or space separated list of phase names.
func ParsePipeline(s string) (Pipeline, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	var p Pipeline
	for _, f := range fields {
		ph, err := ParsePhase(f)
		if err != nil {
			return nil, err
		}
		p = append(p, ph)
	}
	return p, p.Validate()
}

// Validate checks that the pipeline is non-empty, names known phases only,
// has no repeats and keeps canonical order.
func (p Pipeline) Validate() error {
	if len(p) == 0 {
		return errors.New("pipeline is empty: name at least one phase")
	}
	last := -1
	for _, ph := range p {
		idx := -1
		for i, q := range Phases {
			if ph == q {
				idx = i
			}
		}
		if idx < 0 {
			return fmt.Errorf("unknown phase %q in pipeline (known: frame, research, plan, implement, review)", ph)
		}
		if idx <= last {
			return fmt.Errorf("phase %q is out of order or repeated in pipeline %s", ph, p)
		}
		last = idx
	}
	return nil
}

// First returns the first phase of the pipeline.
func (p Pipeline) First() Phase {
	if len(p) == 0 {
		return ""
	}
	return p[0]
}

// Next returns the phase after cur and false when cur is the last one.
func (p Pipeline) Next(cur Phase) (Phase, bool) {
	for i, ph := range p {
		if ph == cur && i+1 < len(p) {
			return p[i+1], true
		}
	}
	return "", false
}

// Has reports whether the pipeline includes ph.
func (p Pipeline) Has(ph Phase) bool {
	for _, q := range p {
		if q == ph {
			return true
		}
	}
	return false
}

// String renders the pipeline as "frame → research → …".
func (p Pipeline) String() string {
	s := make([]string, len(p))
	for i, ph := range p {
		s[i] = string(ph)
	}
	return strings.Join(s, " → ")
}
