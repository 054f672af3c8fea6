package scenario

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The real Claude Code CLI in the panes. Against the scripted model server
// (the default) every beat of the scenario is played by the stub's replies
// and performed by the CLI's own tools in the task's worktree:
//
//	frame      Write artifact, Write sentinel
//	research   brief 1: a plain text reply, no tool call → the pane sits
//	           idle at its prompt → flagged stuck → the operator's resubmit
//	           pastes the brief again (resubmit = "brief") → brief 2:
//	           Write artifact, Write sentinel
//	plan       Write an invalid plan, Write sentinel → the console types
//	           the refusal back → Write the valid plan, Write sentinel
//	implement  attempt 1: Read calc.go, Write half of the fix, then a text
//	           reply saying it waits for the operator → the correction is
//	           typed into the pane → the stub holds that request open and
//	           sends nothing → no progress → the lease expires → the session
//	           is killed (its request with it)
//	           attempt 2: Read calc.go, Write the fix, Bash the tests,
//	           Write artifact, Write sentinel
//	review     Bash the tests, Write artifact, Write sentinel
//
// The CLI runs with a temporary HOME under the demo directory, seeded by
// modelstub.SeedHome to trust the task's worktree, and the stub's address
// only in the harness's own set_env: the user's ~/.claude is never read or
// written.
//
// With ORCHESTRA_DEMO_REAL=1 the CLI talks to the real service with the
// user's own HOME and login instead. A real model cannot be told to stall
// or to write an invalid plan, so that run is the plain task: the operator
// resubmits a stuck pane and approves, and the proofs are the verify gate's
// and the demo's own test run.

// RealEnv is the variable that makes `demo --agent claude` use the real
// service and the user's own login instead of the scripted model server.
const RealEnv = "ORCHESTRA_DEMO_REAL"

// StubModel is the model the panes ask the scripted model server for; the
// stub answers whatever is asked.
const StubModel = "claude-demo-stub"

// ClaudeWaiting is what the stub has Claude say at the end of implement
// attempt 1's first turn; the operator types the correction once the pane
// shows it.
const ClaudeWaiting = "Waiting for the operator"

// ClaudeOptions configure the Claude harness.
type ClaudeOptions struct {
	// Bin is the Claude Code CLI; "" means claudecli.Find.
	Bin string
	// Real uses the real service with the user's HOME, not the stub.
	Real bool
	// Model is the model a real run asks for; "" leaves the CLI's default.
	Model string
	// Logf, if set, receives the stub's log (one line per request).
	Logf func(format string, args ...any)
}

// claudeHarness is the state one Claude harness keeps between its Setup,
// Tweak and Close.
type claudeHarness struct {
	opts  ClaudeOptions
	fast  bool
	srv   *modelstub.Server
	base  string
	home  string
	goEnv map[string]string
}

// Claude returns the harness that runs the real Claude Code CLI in the
// panes: against the scripted model server, or with opts.Real against the
// real service.
func Claude(opts ClaudeOptions) Harness {
	c := &claudeHarness{opts: opts}
	h := Harness{Name: "claude", Setup: c.setup, Tweak: c.tweak, Close: c.close, Unscripted: opts.Real}
	if !opts.Real {
		h.CorrectWhen = ClaudeWaiting
		h.RelaunchedBrief = c.relaunchedBrief
	}
	return h
}

func (c *claudeHarness) setup(s *Scenario) (map[string]string, error) {
	c.fast = s.opts.Fast
	if c.opts.Bin == "" {
		bin, err := claudecli.Find()
		if err != nil {
			return nil, err
		}
		c.opts.Bin = bin
	}
	goEnv, err := goToolEnv(s.opts.Environ)
	if err != nil {
		return nil, err
	}
	c.goEnv = goEnv
	if c.opts.Real {
		return map[string]string{"model": c.opts.Model}, nil
	}
	c.home = filepath.Join(s.Dir, "claude-home")
	if err := os.Mkdir(c.home, 0o700); err != nil {
		return nil, fmt.Errorf("make Claude Code's home: %w", err)
	}
	if err := modelstub.SeedHome(c.home, s.Worktree()); err != nil {
		return nil, err
	}
	c.srv = modelstub.New(s.claudeRules())
	c.srv.Logf = c.opts.Logf
	base, err := c.srv.Start()
	if err != nil {
		return nil, err
	}
	c.base = base
	return map[string]string{"model": StubModel}, nil
}

func (c *claudeHarness) tweak(cfg *config.Config) {
	spec := cfg.Harness["claude"]
	if c.opts.Real {
		spec.Argv = append([]string{c.opts.Bin}, spec.Argv[1:]...)
		if c.opts.Model == "" {
			spec.Argv = withoutModel(spec.Argv)
		}
	} else {
		spec = modelstub.Harness(spec, c.opts.Bin, c.home, c.base)
	}
	// The built-in resubmit sends only Enter, which an idle Claude Code
	// prompt ignores; pasting the brief again is what a person would do.
	spec.Resubmit = session.ResubmitBrief
	if spec.SetEnv == nil {
		spec.SetEnv = map[string]string{}
	}
	// The CLI runs the project's tests with its Bash tool, under a HOME of
	// its own: name the Go caches outright so the tests build warm.
	for k, v := range c.goEnv {
		spec.SetEnv[k] = v
	}
	cfg.Harness["claude"] = spec
	c.clocks(cfg)
}

// clocks sets the lease and stuck clocks for the CLI. A real CLI takes a
// second or two to start and to run each tool, so the scripted agent's
// clocks would expire healthy sessions; against a real model the clocks
// are a person's.
func (c *claudeHarness) clocks(cfg *config.Config) {
	length, window, stuck := 4*time.Second, 3500*time.Millisecond, 1500*time.Millisecond
	switch {
	case c.opts.Real:
		length, window, stuck = 10*time.Minute, 8*time.Minute, 2*time.Minute
	case !c.fast:
		// Room for the operator to read the pane and type the correction
		// at a person's speed before the idle session's lease runs out.
		length, window, stuck = 9*time.Second, 7*time.Second, 2*time.Second
	}
	cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = length, window
	cfg.Stuck.After.Duration = stuck
	// Each renewal needs progress; a CLI phase renews every half second
	// or so while it works, so allow more than the scripted agent needs.
	cfg.Lease.MaxRenewals = 40
}

func (c *claudeHarness) close() error {
	if c.srv == nil {
		return nil
	}
	return c.srv.Close()
}

// relaunchedBrief reads the brief of implement attempt 2 from the stub's
// request log: the text Claude Code sent as the user's message.
func (c *claudeHarness) relaunchedBrief(*Scenario) (string, error) {
	if c.srv == nil {
		return "", errors.New("the model stub never started")
	}
	for _, req := range c.srv.Requests() {
		if b, ok := modelstub.FindBrief(req); ok && b.Phase == task.PhaseImplement && b.Attempt == 2 {
			return req.Messages[b.Index].Text, nil
		}
	}
	return "", errors.New("the model stub received no brief for implement attempt 2 (was there a relaunch?)")
}

// withoutModel drops "--model {{model}}" from argv, so the CLI uses its
// own default model.
func withoutModel(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		if argv[i] == "--model" && i+1 < len(argv) && argv[i+1] == "{{model}}" {
			i++
			continue
		}
		out = append(out, argv[i])
	}
	return out
}

// goToolEnv returns the Go toolchain's cache locations as the console's
// environment resolves them, plus GOTOOLCHAIN=local so a test run never
// downloads a toolchain.
func goToolEnv(environ []string) (map[string]string, error) {
	cmd := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH")
	cmd.Env = environ
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env (the agent runs the project's tests with the go tool): %w", err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	env := map[string]string{"GOTOOLCHAIN": "local"}
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if i < len(vals) && vals[i] != "" {
			env[k] = vals[i]
		}
	}
	return env, nil
}
