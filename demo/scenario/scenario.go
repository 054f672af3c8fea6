// Package scenario is the demo: a throwaway calc repository, one task run
// by a scripted agent through every phase, a scripted operator acting on
// the coordinator's events, and the proofs checked afterwards. It is its
// own package, apart from package demo, because it drives the coordinator,
// whose tests use package demo's project.
package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	project "github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// The demo scenario, beat by beat, as the operator sees it (see Operator for
// who acts when):
//
//	frame      the agent frames the task
//	research   the agent ignores its brief → the pane is flagged stuck →
//	           the operator resubmits it → it moves
//	plan       the agent writes an invalid plan → refused, typed back → fixed
//	implement  attempt 1: the operator types a correction into the live
//	           pane; the agent half-edits calc.go and stalls → no progress →
//	           the lease expires → relaunch with a continuity brief (the
//	           correction above the plan, the first attempt's files)
//	           attempt 2: the fix → the verify gate, red at the baseline,
//	           goes green
//	review     → awaiting review → the operator approves → completed
//
// Every beat is driven by the events the coordinator publishes, never by a
// timer, so the same scenario runs at any pace and in the console or as
// headless text.

// Correction is the human decision the demo's operator injects.
const Correction = "Keep the signatures of Add and Mul unchanged; fix the bodies only."

// TaskTitle is the demo task's title.
const TaskTitle = "Fix calc"

// Break makes the scenario fail one proof on purpose, so a test can see
// the demo catch it.
type Break string

// The ways to break the scenario.
const (
	// BreakNone runs the scenario as designed.
	BreakNone Break = ""
	// BreakContinuity squeezes the brief budget so the relaunched brief's
	// continuity section is trimmed away.
	BreakContinuity Break = "continuity"
	// BreakFix has the agent apply only half of the fix in every implement
	// attempt, so the tests stay red.
	BreakFix Break = "fix"
)

// Options configure one demo run.
type Options struct {
	// Fast sets every pause to zero: the agent's pacing and the operator's.
	Fast bool
	// Keep leaves the demo directory in place and says where it is.
	Keep bool
	// Harness is the agent harness the panes run; zero means Scripted().
	Harness Harness
	// Record is where the console's screen is recorded (asciicast v2), if
	// anywhere; the sessions' pane recordings are copied next to it.
	Record string
	// Break, for tests, breaks one proof on purpose.
	Break Break
	// TempDir is where the demo directory is made; "" means the system's.
	TempDir string
	// Environ is the environment sessions and the verify gate start from;
	// nil means os.Environ().
	Environ []string
}

// Harness is how the scenario's panes run an agent. The scripted agent is
// the default; another harness (a real agent CLI against a scripted model)
// plugs in here with its own setup.
type Harness struct {
	// Name is the harness in the configuration (e.g. "scripted").
	Name string
	// Setup readies the harness for a scenario: it may write files under
	// s.Dir, and returns the template vars the harness argv needs.
	Setup func(s *Scenario) (map[string]string, error)
	// Tweak, if set, adjusts the configuration after the scenario's own
	// settings (e.g. to pass more environment to the agent).
	Tweak func(*config.Config)
	// CorrectWhen is what the implement pane shows when the operator types
	// the correction; "" means ThinkingMarker, the scripted agent's.
	CorrectWhen string
	// RelaunchedBrief, if set, returns the brief of implement attempt 2 as
	// the agent received it; nil reads the scripted agent's record.
	RelaunchedBrief func(s *Scenario) (string, error)
	// Unscripted says no script drives the model (the real service): the
	// beats that need one cannot be forced, so the operator only resubmits
	// a stuck pane and approves, and only the verify proofs are checked.
	Unscripted bool
	// ReportedUsage, if set, returns each reply the model server sent with
	// the tokens it reported, for the usage proof.
	ReportedUsage func() []Served
	// Close, if set, releases what Setup started; Scenario.Close calls it.
	Close func() error
}

// Scripted returns the scripted-agent harness: {{self}} agent --script
// {{script}}, where {{self}} is the running binary and the script is the
// scenario's (see Scenario.AgentScript).
func Scripted() Harness {
	return Harness{Name: "scripted", Setup: func(s *Scenario) (map[string]string, error) {
		sc := s.AgentScript()
		data, err := json.MarshalIndent(sc, "", "  ")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(s.Dir, "agent-script.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, fmt.Errorf("write the agent's script: %w", err)
		}
		return map[string]string{"script": path}, nil
	}, Tweak: func(cfg *config.Config) {
		// The agent runs the project's tests too: give it the Go
		// toolchain's settings so it shares the build cache.
		h := cfg.Harness["scripted"]
		h.Env = append(append([]string(nil), h.Env...), goEnv...)
		cfg.Harness["scripted"] = h
	}}
}

// goEnv are the variables that locate the Go toolchain's caches.
var goEnv = []string{"GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GOENV"}

// pacing is the scenario's clock settings: realistic, or zero with --fast.
type pacing struct {
	agentPaceMS int
	pause       time.Duration // the operator's pause before each act
	keystroke   time.Duration // between two typed keys
	linger      time.Duration // the end stays on screen this long
	lease       time.Duration
	window      time.Duration
	stuck       time.Duration
}

func pacingFor(fast bool) pacing {
	if fast {
		// Short clocks, with room for a loaded machine: the stuck
		// research pane must be resubmitted well before its lease runs
		// out. A headless run with the scripted agent does not wait them
		// out: it moves the engine's clock over its two stalls
		// (stallClock). The end lingers only long enough to be seen.
		return pacing{linger: 500 * time.Millisecond, lease: 8 * time.Second, window: 7500 * time.Millisecond, stuck: 4 * time.Second}
	}
	// Slow enough to watch (about 30 seconds in all): the operator reads
	// before acting and types at a person's speed, and the lease strip
	// visibly drains during the stall.
	return pacing{agentPaceMS: 50, pause: 1200 * time.Millisecond, keystroke: 40 * time.Millisecond, linger: 5 * time.Second,
		lease: 4 * time.Second, window: 2 * time.Second, stuck: 1200 * time.Millisecond}
}

// Served is one reply a model server sent: when its request arrived, and
// the tokens the reply reported.
type Served struct {
	At     time.Time
	Tokens usage.Tokens
}

// Scenario is one prepared demo run: a throwaway calc repository with a
// coordinator opened on it. The task is added by the Operator once the
// coordinator runs.
type Scenario struct {
	// Dir is the demo directory; everything the demo writes is under it.
	Dir string
	// Project is the calc repository.
	Project string
	// RecordDir is where the scripted agent records briefs and inputs.
	RecordDir string
	// Opened is the coordinator on Project.
	Opened *coord.Opened
	// ID is the demo task's id, chosen before the task is added so a
	// harness's Setup can prepare for its worktree (see Worktree).
	ID task.ID

	opts  Options
	pace  pacing
	clock clock
}

// Prepare makes the demo directory, writes the project and the harness's
// setup, and opens a coordinator with the scenario's short clocks. Close
// it when done.
func Prepare(opts Options) (*Scenario, error) {
	if opts.Harness.Name == "" {
		opts.Harness = Scripted()
	}
	dir, err := os.MkdirTemp(opts.TempDir, "orchestra-demo-")
	if err != nil {
		return nil, fmt.Errorf("make the demo directory: %w", err)
	}
	// The real path: an agent CLI keys what it trusts by the directory it
	// finds itself in, which has its symlinks resolved.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	s := &Scenario{Dir: dir, Project: filepath.Join(dir, "calc"), RecordDir: filepath.Join(dir, "agent-record"),
		ID: task.NewID(time.Now()), opts: opts, pace: pacingFor(opts.Fast)}
	if err := s.open(); err != nil {
		if opts.Harness.Close != nil {
			err = errors.Join(err, opts.Harness.Close())
		}
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return s, nil
}

func (s *Scenario) open() error {
	if err := os.Mkdir(s.Project, 0o755); err != nil {
		return fmt.Errorf("make the demo project: %w", err)
	}
	if err := project.WriteProject(s.Project); err != nil {
		return err
	}
	vars := map[string]string{}
	if s.opts.Harness.Setup != nil {
		v, err := s.opts.Harness.Setup(s)
		if err != nil {
			return fmt.Errorf("set up harness %s: %w", s.opts.Harness.Name, err)
		}
		vars = v
	}
	o, err := coord.Open(coord.OpenParams{
		Dir: s.Project, Vars: vars, Environ: s.opts.Environ, Tweak: s.tweak,
		Settle: 30 * time.Millisecond, SampleEvery: 100 * time.Millisecond, Now: s.clock.Now,
	})
	if err != nil {
		return err
	}
	s.Opened = o
	return nil
}

// tweak applies the scenario's clocks and the harness's settings.
func (s *Scenario) tweak(cfg *config.Config) {
	cfg.Lease.Length.Duration = s.pace.lease
	cfg.Lease.Window.Duration = s.pace.window
	cfg.Lease.Tick.Duration = 100 * time.Millisecond
	// Enough for the slowest phase at the realistic pace; the operator
	// sees the cap on the lease strip, so keep it believable.
	cfg.Lease.MaxRenewals = 20
	cfg.Lease.MaxAttempts = 3
	cfg.Stuck.After.Duration = s.pace.stuck
	cfg.Stuck.AutoResubmit = 0
	cfg.Pane = config.Pane{Cols: 100, Rows: 30, History: 10000}
	if s.opts.Break == BreakContinuity {
		// Small enough that everything trimmable goes, continuity first.
		cfg.Brief.Budget = 512
	}
	if s.opts.Harness.Tweak != nil {
		s.opts.Harness.Tweak(cfg)
	}
}

// AgentScript is the scripted agent's part of the scenario.
func (s *Scenario) AgentScript() agent.Script {
	pace := s.pace.agentPaceMS
	fix := project.CalcFixed
	if s.opts.Break == BreakFix {
		fix = project.CalcHalf
	}
	return agent.Script{
		PaceMS:    &pace,
		RecordDir: s.RecordDir,
		Phases: map[task.Phase][]agent.Entry{
			task.PhaseResearch: {{Behave: agent.BehaveIgnoreFirst}},
			task.PhasePlan:     {{InvalidFirst: true}},
			task.PhaseImplement: {
				{Attempt: 1, Behave: agent.BehaveStall, AwaitDecision: true, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcHalf}}},
				{Edits: []agent.Edit{{Path: "calc.go", Content: fix}}},
			},
		},
	}
}

// NewTask is the demo task as the operator adds it.
func (s *Scenario) NewTask() *task.Task {
	return &task.Task{ID: s.ID, Title: TaskTitle, Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand, Harness: s.opts.Harness.Name}
}

// Close closes the store and removes the demo directory unless
// Options.Keep. Stop the coordinator first.
func (s *Scenario) Close() error {
	var err error
	if s.Opened != nil {
		err = s.Opened.Close()
	}
	if s.opts.Harness.Close != nil {
		err = errors.Join(err, s.opts.Harness.Close())
	}
	if s.opts.Keep {
		return err
	}
	return errors.Join(err, os.RemoveAll(s.Dir))
}

// Worktree is the directory the demo task's sessions run in.
func (s *Scenario) Worktree() string {
	return filepath.Join(s.Project, filepath.FromSlash(repo.WorktreesDir), string(s.ID))
}

// Kept reports whether Close leaves the demo directory in place.
func (s *Scenario) Kept() bool { return s.opts.Keep }

// pause waits the operator's pause, or until ctx ends.
func (s *Scenario) pause(ctx context.Context) { s.wait(ctx, s.pace.pause) }
