package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	project "github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// The claims the demo proves after every run, one line each.
const (
	ClaimContinuity = "the relaunched implement brief names the first attempt's files and puts the correction above the plan"
	ClaimDirect     = "the tests pass when the demo runs them itself, on the task's branch"
	ClaimGate       = "the console's own verify gate ran the tests last and they passed"
	ClaimBeats      = "every beat happened, in order: stuck → resubmitted, plan refused → fixed, correction delivered, lease expired → relaunched, verify red → green, approved"
	// ClaimUsage is proved only by a harness that knows what its model
	// server reported (Harness.ReportedUsage).
	ClaimUsage = "the usage the console recorded from the agent's own records is what the model server served, side requests included, token for token (but for a reply in flight when the console killed a session, or one a session marked as a lower bound did not record)"
)

// Finish checks the proofs after a run and prints one line each, then the
// pane recordings and the outcome. runCode is the run's own exit status
// and actErr the first command the operator could not give. p renames ids
// as the run's event lines did; nil prints them as they are. It returns
// the demo's exit status: 0 only if the run was green and every proof held.
func (s *Scenario) Finish(ctx context.Context, w io.Writer, p *headless.Printer, op *Operator, runCode int, actErr error) int {
	return s.Report(ctx, w, p, op, s.Prove(ctx, op, runCode, actErr))
}

// Proof is one claim of the demo and whether it held.
type Proof struct {
	Claim string
	// Err says why the claim does not hold; nil when it does.
	Err error
	// Skipped says the claim cannot be checked with this harness.
	Skipped bool
}

// Outcome is what the proofs found after a run.
type Outcome struct {
	Proofs []Proof
	// Failed lists every failure, proofs and the run's own, one sentence
	// each.
	Failed []string
}

// OK reports whether the run was green and every proof held.
func (o Outcome) OK() bool { return len(o.Failed) == 0 }

// Prove checks the proofs after a run. runCode is the run's own exit
// status and actErr the first command the operator could not give.
func (s *Scenario) Prove(ctx context.Context, op *Operator, runCode int, actErr error) Outcome {
	var o Outcome
	if runCode != 0 {
		o.Failed = append(o.Failed, fmt.Sprintf("the run did not end green (exit status %d)", runCode))
	}
	if actErr != nil {
		o.Failed = append(o.Failed, actErr.Error())
	}
	id := op.TaskID()
	if id == "" {
		o.Failed = append(o.Failed, "the demo task was never added")
		return o
	}
	for _, pr := range []struct {
		claim    string
		check    func(context.Context, task.ID) error
		scripted bool // needs a scripted model to happen at all
	}{
		{ClaimContinuity, s.proveContinuity, true},
		{ClaimDirect, s.proveDirect, false},
		{ClaimGate, s.proveGate, false},
		{ClaimBeats, s.proveBeats, true},
		{ClaimUsage, s.proveUsage, true},
	} {
		if pr.claim == ClaimUsage && s.opts.Harness.ReportedUsage == nil {
			continue
		}
		if pr.scripted && s.opts.Harness.Unscripted {
			o.Proofs = append(o.Proofs, Proof{Claim: pr.claim, Skipped: true})
			continue
		}
		err := pr.check(ctx, id)
		o.Proofs = append(o.Proofs, Proof{Claim: pr.claim, Err: err})
		if err != nil {
			o.Failed = append(o.Failed, pr.claim+": "+err.Error())
		}
	}
	return o
}

// Report prints an outcome: one line per proof, the pane recordings, and
// the verdict. p renames ids as the run's event lines did; nil prints them
// as they are. It returns the demo's exit status: 0 only if o is OK.
func (s *Scenario) Report(ctx context.Context, w io.Writer, p *headless.Printer, op *Operator, o Outcome) int {
	rename := func(t string) string { return t }
	if p != nil {
		rename = p.Rename
	}
	for _, pr := range o.Proofs {
		switch {
		case pr.Skipped:
			fmt.Fprintf(w, "proof: %s skipped: the real model is not scripted, so its beats cannot be forced\n", pr.Claim)
		case pr.Err != nil:
			fmt.Fprintf(w, "proof: %s FAILED: %s\n", pr.Claim, rename(pr.Err.Error()))
		default:
			fmt.Fprintf(w, "proof: %s ok\n", pr.Claim)
		}
	}
	if id := op.TaskID(); id != "" {
		s.listRecordings(ctx, w, id, rename)
	}
	if s.opts.Keep {
		fmt.Fprintf(w, "kept the demo directory: %s (the calc repository is %s)\n", s.Dir, s.Project)
	}
	if !o.OK() {
		failed := make([]string, len(o.Failed))
		for i, f := range o.Failed {
			failed[i] = rename(f)
		}
		fmt.Fprintf(w, "FAILED: %s\n", strings.Join(failed, "; "))
		return 1
	}
	if s.opts.Harness.Unscripted {
		fmt.Fprintln(w, "demo: ok, every proof a real model allows held")
		return 0
	}
	fmt.Fprintln(w, "demo: ok, every proof held")
	return 0
}

// RelaunchedBrief returns the brief the agent received for the second
// implement attempt (the first one, if it got more), or an error saying
// why there is none. The scripted agent records its briefs; another
// harness says where it finds them (Harness.RelaunchedBrief).
func (s *Scenario) RelaunchedBrief() (string, error) {
	if s.opts.Harness.RelaunchedBrief != nil {
		return s.opts.Harness.RelaunchedBrief(s)
	}
	names, err := filepath.Glob(filepath.Join(s.RecordDir, "brief-"+string(task.PhaseImplement)+"-2-*.md"))
	if err != nil || len(names) == 0 {
		return "", errors.New("the agent recorded no brief for implement attempt 2 (was there a relaunch?)")
	}
	sort.Strings(names)
	data, err := os.ReadFile(names[0])
	if err != nil {
		return "", fmt.Errorf("read the relaunched brief: %w", err)
	}
	return string(data), nil
}

func (s *Scenario) proveContinuity(context.Context, task.ID) error {
	b, err := s.RelaunchedBrief()
	if err != nil {
		return err
	}
	return CheckRelaunchedBrief(b, Correction, "calc.go")
}

// CheckRelaunchedBrief checks what a relaunch brief must hold: a continuity
// section naming file, and the correction under the decisions heading,
// which comes before the accepted plan.
func CheckRelaunchedBrief(brief, correction, file string) error {
	var errs []error
	cont, ok := Section(brief, task.HeadingContinuity)
	switch {
	case !ok:
		errs = append(errs, fmt.Errorf("the brief has no %q section", task.HeadingContinuity))
	case !strings.Contains(cont, file):
		errs = append(errs, fmt.Errorf("its continuity section does not name %s", file))
	}
	dec, ok := Section(brief, task.HeadingDecisions)
	switch {
	case !ok:
		errs = append(errs, fmt.Errorf("the brief has no %q section", task.HeadingDecisions))
	case !strings.Contains(dec, correction):
		errs = append(errs, errors.New("its decisions section does not hold the correction"))
	}
	d, pl := strings.Index(brief, task.HeadingDecisions), strings.Index(brief, task.HeadingPlan)
	switch {
	case pl < 0:
		errs = append(errs, fmt.Errorf("the brief has no %q section", task.HeadingPlan))
	case d > pl:
		errs = append(errs, errors.New("the decisions come after the plan"))
	}
	return errors.Join(errs...)
}

// Section returns a brief's section under heading, up to the next heading
// of any level (so the continuity section ends where its dead ends begin),
// and whether it was there.
func Section(brief, heading string) (string, bool) {
	i := strings.Index(brief, heading+"\n")
	if i < 0 {
		return "", false
	}
	rest := brief[i+len(heading)+1:]
	if j := strings.Index(rest, "\n#"); j >= 0 {
		return rest[:j+1], true
	}
	return rest, true
}

// proveDirect checks out the task's branch afresh and runs the project's
// tests there, outside the console: the console's verdict is not taken on
// its word either.
func (s *Scenario) proveDirect(ctx context.Context, id task.ID) error {
	t, err := s.Opened.Store.TaskGet(ctx, id)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.Dir, "proof-checkout")
	if err := project.Git(s.Project, "worktree", "add", "--quiet", "--detach", dir, t.Branch); err != nil {
		return err
	}
	defer project.Git(s.Project, "worktree", "remove", "--force", dir) //nolint:errcheck // the demo directory goes anyway
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = s.opts.Environ
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go test -count=1 ./... on %s: %v: %s", t.Branch, err, lastLines(string(out), 4))
	}
	return nil
}

func (s *Scenario) proveGate(ctx context.Context, id task.ID) error {
	vs, err := s.Opened.Store.VerdictList(ctx, id)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		return errors.New("the gate never ran")
	}
	if v := vs[len(vs)-1].Verdict; v.Status != verify.StatusOK {
		return fmt.Errorf("its latest verdict is %s", v.Line())
	}
	return nil
}

// beat is one step of the scenario as the ledger shows it.
type beat struct {
	what string
	is   func(task.Event) bool
}

func kind(k task.Kind) func(task.Event) bool { return func(e task.Event) bool { return e.Kind == k } }

func refusal(r task.Reason) func(task.Event) bool {
	return func(e task.Event) bool { return e.Kind == task.EvRefusal && e.Reason == r }
}

var beats = []beat{
	{"verify red (the baseline)", func(e task.Event) bool { return e.Kind == task.EvVerifyFinished && e.Reason != "" }},
	{"stuck", refusal(task.ReasonStuck)},
	{"resubmitted", kind(task.EvResubmitted)},
	{"plan refused", refusal(task.ReasonArtifactSchema)},
	{"plan sealed", func(e task.Event) bool {
		return e.Kind == task.EvArtifactSealed && strings.Contains(e.Text, task.ArtifactPath(task.PhasePlan))
	}},
	{"correction delivered", kind(task.EvDecisionDelivered)},
	{"lease expired", kind(task.EvLeaseExpired)},
	{"relaunched", kind(task.EvSessionLaunched)},
	{"verify green", func(e task.Event) bool { return e.Kind == task.EvVerifyFinished && e.Reason == "" }},
	{"awaiting review", kind(task.EvTaskAwaiting)},
	{"approved", kind(task.EvTaskCompleted)},
}

func (s *Scenario) proveBeats(ctx context.Context, id task.ID) error {
	evs, err := s.Opened.Store.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return err
	}
	return CheckBeats(evs)
}

// CheckBeats checks that the ledger shows every beat of the scenario, in
// order, and names the first one missing.
func CheckBeats(evs []task.Event) error {
	i := 0
	for _, b := range beats {
		for i < len(evs) && !b.is(evs[i]) {
			i++
		}
		if i == len(evs) {
			return fmt.Errorf("no %q where the scenario expects it", b.what)
		}
		i++
	}
	return nil
}

// listRecordings lists every session's pane recording. With Record set they
// are copied next to it; otherwise they stay in the demo directory, kept
// only with Keep: without either only their number is said, since they go
// with the directory.
func (s *Scenario) listRecordings(ctx context.Context, w io.Writer, id task.ID, rename func(string) string) {
	sessions, err := s.Opened.Store.SessionList(ctx, id)
	if err != nil {
		fmt.Fprintf(w, "recordings: %v\n", err)
		return
	}
	switch {
	case s.opts.Record != "":
		fmt.Fprintf(w, "pane recordings (copied next to %s):\n", s.opts.Record)
	case s.opts.Keep:
		fmt.Fprintln(w, "pane recordings:")
	default:
		// They go with the demo directory as the demo ends: a list of
		// their paths would name files already deleted.
		n := 0
		for _, se := range sessions {
			if se.CastPath != "" {
				n++
			}
		}
		fmt.Fprintf(w, "pane recordings: %d, removed with the demo directory (--keep keeps them, --record F.cast copies them next to F.cast)\n", n)
		return
	}
	for _, se := range sessions {
		if se.CastPath == "" {
			continue
		}
		src := filepath.Join(s.Project, filepath.FromSlash(se.CastPath))
		where := src // kept
		if s.opts.Record != "" {
			dst := strings.TrimSuffix(s.opts.Record, ".cast") + fmt.Sprintf("-%s-%d.cast", se.Phase, se.Attempt)
			where = dst
			if err := copyFile(src, dst); err != nil {
				where = "not copied: " + rename(err.Error())
			}
		}
		fmt.Fprintf(w, "  %-9s attempt %d  %s\n", se.Phase, se.Attempt, where)
	}
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600) // as private as the console's own cast

}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " ⏎ ")
}
