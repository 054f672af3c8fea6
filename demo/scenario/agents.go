package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agentcli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// The real Codex, Gemini CLI and opencode in the panes, each with its
// built-in harness, against the scripted model server speaking its
// provider's API (the Responses API, generateContent, Chat Completions).
// The beats are Claude's (see claude.go): the stub plays the same rules,
// and where a CLI has no file tools each Write, Read or Bash is done by the
// CLI's own shell tool. The harness keeps everything of the built-in spec
// (ready marker, quiet period, volatile patterns, flags) but the binary,
// the variables that point the CLI at the stub and the resubmit mode, so
// the demo proves the built-in defaults: in particular implement attempt
// 1's stalled model loses its lease with the spinner masked only by the
// built-in volatile patterns.

// AgentNames lists the CLIs Agent runs, as `demo --agent` names them.
var AgentNames = []string{"codex", "gemini", "opencode"}

// agentKind is how one CLI is set up against the stub.
type agentKind struct {
	cli agentcli.CLI
	// seed prepares home for the CLI and returns its harness variables.
	seed func(home, base, worktree string) (map[string]string, error)
	// args are put after the binary, before the built-in argv's flags.
	args []string
	// model is what the stub is asked for (the {{model}} var).
	model string
	// lease, window and stuck are the fast clocks; a CLI that takes long
	// to start or to draw gets longer ones.
	lease, window, stuck time.Duration
	// ownGrace, if set, is the harness's own_grace with the fast clocks:
	// a CLI whose own process keeps busy behind its spinner while its
	// model is held renews its lease on that CPU time for the default
	// minute (session.OwnGrace) before the lease can run out.
	ownGrace time.Duration
}

var agentKinds = map[string]agentKind{
	"codex": {
		cli: agentcli.Codex, model: "gpt-demo-stub",
		seed: func(home, base, worktree string) (map[string]string, error) {
			codexHome := filepath.Join(home, ".codex")
			return modelstub.CodexSetEnv(codexHome), modelstub.SeedCodexHome(codexHome, base, "gpt-demo-stub", worktree)
		},
		lease: 4 * time.Second, window: 3500 * time.Millisecond, stuck: 1500 * time.Millisecond,
	},
	"gemini": {
		cli: agentcli.Gemini, model: modelstub.GeminiModel, args: []string{"-m", modelstub.GeminiModel},
		seed: func(home, base, _ string) (map[string]string, error) {
			return modelstub.GeminiSetEnv(home, base), modelstub.SeedGeminiHome(home)
		},
		// Gemini CLI takes seconds to draw a reply, behind a spinner that
		// is no progress. (A slow start costs no lease: until its launch
		// is confirmed a session is bounded by its launch_timeout.)
		lease: 15 * time.Second, window: 13 * time.Second, stuck: 4 * time.Second,
		// Its spinner keeps its node process busy: with the default
		// grace the stalled implement attempt 1 renewed its lease on
		// that for a minute (34 renewals after the correction), a
		// minute and a quarter in all before the lease ran out.
		ownGrace: 15 * time.Second,
	},
	"opencode": {
		cli: agentcli.OpenCode, model: modelstub.OpenCodeModel,
		seed: func(home, base, _ string) (map[string]string, error) {
			env := modelstub.OpenCodeSetEnv(home)
			env["HOME"] = home
			return env, modelstub.SeedOpenCodeHome(home, base)
		},
		// opencode works longest behind its spinner before a request:
		// over 30 s on a loaded machine, where a 30 s lease ran out in
		// frame before its first request.
		lease: 60 * time.Second, window: 55 * time.Second, stuck: 5 * time.Second,
	},
}

// AgentOptions configure Agent.
type AgentOptions struct {
	// Bin is the CLI; "" finds it (ORCHESTRA_<NAME>_BIN, then PATH).
	Bin string
	// Logf, if set, receives the stub's log.
	Logf func(format string, args ...any)
}

type agentHarness struct {
	name  string
	kind  agentKind
	opts  AgentOptions
	fast  bool
	srv   *modelstub.Server
	env   map[string]string
	goEnv map[string]string
}

// Agent returns the harness that runs the named CLI (one of AgentNames) in
// the panes against the scripted model server.
func Agent(name string, opts AgentOptions) (Harness, error) {
	k, ok := agentKinds[name]
	if !ok {
		return Harness{}, fmt.Errorf("unknown agent %q (available: %v)", name, AgentNames)
	}
	a := &agentHarness{name: name, kind: k, opts: opts}
	return Harness{Name: name, Setup: a.setup, Tweak: a.tweak, Close: a.close,
		CorrectWhen: ClaudeWaiting, RelaunchedBrief: a.relaunchedBrief, ReportedUsage: a.reported}, nil
}

// replyUsage is what the stub reports for every reply, so the usage proof
// compares known figures.
var replyUsage = modelstub.Usage{InputTokens: 1000, OutputTokens: 50, CacheReadInputTokens: 200}

// withUsage makes every reply of rules report replyUsage.
func withUsage(rules []modelstub.Rule) []modelstub.Rule {
	out := make([]modelstub.Rule, len(rules))
	for i, r := range rules {
		reply := r.Reply
		r.Reply = func(req modelstub.Request) modelstub.Reply {
			rep := reply(req)
			rep.Usage = replyUsage
			return rep
		}
		out[i] = r
	}
	return out
}

// reported is the usage of every reply the stub sent, the CLI's side
// requests (titles, topic detection) included: what a provider would bill.
func (a *agentHarness) reported() []Served {
	if a.srv == nil {
		return nil
	}
	var out []Served
	for _, e := range a.srv.Served() {
		u := e.Reply.Usage
		out = append(out, Served{At: e.Request.At, Tokens: usage.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens),
			CacheCreation: int64(u.CacheCreationInputTokens), CacheRead: int64(u.CacheReadInputTokens)}})
	}
	return out
}

func (a *agentHarness) setup(s *Scenario) (map[string]string, error) {
	a.fast = s.opts.Fast
	if a.opts.Bin == "" {
		bin, err := a.kind.cli.Find()
		if err != nil {
			return nil, err
		}
		a.opts.Bin = bin
	}
	goEnv, err := goToolEnv(s.opts.Environ)
	if err != nil {
		return nil, err
	}
	a.goEnv = goEnv
	home := filepath.Join(s.Dir, a.name+"-home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, fmt.Errorf("make %s's home: %w", a.kind.cli.Name, err)
	}
	a.srv = modelstub.New(withUsage(s.claudeRules()))
	a.srv.Logf = a.opts.Logf
	base, err := a.srv.Start()
	if err != nil {
		return nil, err
	}
	env, err := a.kind.seed(home, base, s.Worktree())
	if err != nil {
		return nil, err
	}
	env["HOME"] = home
	a.env = env
	return map[string]string{"model": a.kind.model}, nil
}

func (a *agentHarness) tweak(cfg *config.Config) {
	spec := cfg.Harness[a.name]
	spec.Argv = append(append([]string{a.opts.Bin}, a.kind.args...), spec.Argv[1:]...)
	set := map[string]string{}
	for k, v := range spec.SetEnv {
		set[k] = v
	}
	for k, v := range a.env {
		set[k] = v
	}
	// The CLI runs the project's tests with its shell tool, under a HOME
	// of its own: name the Go caches outright so the tests build warm.
	for k, v := range a.goEnv {
		set[k] = v
	}
	spec.SetEnv = set
	// As for Claude: an idle prompt ignores a bare Enter, and pasting the
	// brief again is what a person would do.
	spec.Resubmit = session.ResubmitBrief
	if a.fast && a.kind.ownGrace > 0 {
		spec.OwnGrace = session.Duration{Duration: a.kind.ownGrace}
	}
	cfg.Harness[a.name] = spec
	length, window, stuck := a.kind.lease, a.kind.window, a.kind.stuck
	if !a.fast {
		length, window, stuck = length+5*time.Second, window+3500*time.Millisecond, stuck+500*time.Millisecond
	}
	cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = length, window
	cfg.Stuck.After.Duration = stuck
	cfg.Lease.MaxRenewals = 40
}

func (a *agentHarness) close() error {
	if a.srv == nil {
		return nil
	}
	return a.srv.Close()
}

// relaunchedBrief reads the brief of implement attempt 2 from the stub's
// request log, as the CLI sent it.
func (a *agentHarness) relaunchedBrief(*Scenario) (string, error) {
	if a.srv == nil {
		return "", errors.New("the model stub never started")
	}
	for _, req := range a.srv.Requests() {
		if b, ok := modelstub.FindBrief(req); ok && b.Phase == task.PhaseImplement && b.Attempt == 2 {
			return req.Messages[b.Index].Text, nil
		}
	}
	return "", errors.New("the model stub received no brief for implement attempt 2 (was there a relaunch?)")
}
