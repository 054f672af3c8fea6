package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agentcli"
	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// limitReset is how far ahead of the limit the stubs put its reset for a
// CLI that keeps the default harness.own_grace (a minute): longer than
// that grace and the lease below together, so a wait that did not hold
// the lease would lose it even while the CLI's own CPU time still counts.
const limitReset = 90 * time.Second

// limitGrace is the harness.own_grace the tests give a CLI that builds its
// requests quickly (all but opencode), and limitShortReset the reset then:
// still longer than limitGrace and the lease (20 s) together, and than
// stuck.after (10 s), by 15 s; half as long a wait as limitReset.
const (
	limitGrace      = 10 * time.Second
	limitShortReset = 45 * time.Second
)

// reset is how far ahead of the limit cli's stub puts its reset.
func (cli limitCLI) reset() time.Duration {
	if cli.ownGrace > 0 {
		return limitShortReset
	}
	return limitReset
}

// limitCLI is one real agent CLI against its stub, answering mid-phase
// with its provider's usage-limit error.
type limitCLI struct {
	name    string
	harness string
	bin     func(t *testing.T) string
	args    []string
	// seed prepares the CLI's home; nil seeds Claude Code's.
	seed func(t *testing.T, home, base, dir string) map[string]string
	// shown says the CLI shows the reset on its screen (Codex, to the
	// minute; opencode, the provider's "try again in 87s"); the others
	// name none, and limits.limit_wait is set to the stub's reset.
	shown bool
	// retries says the CLI retries by itself at the reset (opencode):
	// nothing is typed then.
	retries bool
	// ownGrace, if set, is the harness's own_grace in these tests (see
	// limitGrace), and the reset limitShortReset. opencode keeps the
	// default: it spent over 30 s of its own CPU time building a request
	// on a loaded machine. So does Claude Code 2.1.197: with a reset 45 s
	// ahead it retries by itself, showing no limit, and was never limited.
	ownGrace time.Duration
}

var limitCLIs = []limitCLI{
	{name: "claude", harness: "claude", bin: func(t *testing.T) string { return claudecli.Require(t) }, ownGrace: limitGrace},
	{name: "claude-2.1.197", harness: "claude", bin: func(t *testing.T) string {
		bin := os.Getenv(oldestClaudeEnv)
		if bin == "" {
			t.Skip(oldestClaudeEnv + " is not set")
		}
		return bin
	}},
	{name: "codex", harness: "codex", bin: func(t *testing.T) string { return agentcli.Codex.Require(t) }, seed: seedCodex, shown: true,
		ownGrace: limitGrace},
	{name: "gemini", harness: "gemini", bin: func(t *testing.T) string { return agentcli.Gemini.Require(t) },
		args: []string{"-m", modelstub.GeminiModel}, seed: seedGemini, ownGrace: limitGrace},
	{name: "opencode", harness: "opencode", bin: func(t *testing.T) string { return agentcli.OpenCode.Require(t) },
		seed: seedOpenCode, shown: true, retries: true},
}

// Each CLI, its stub answering the phase's second request with its
// provider's usage limit (the reset 45 s ahead, 90 s for opencode and
// Claude Code 2.1.197; see cli.reset): the task shows waiting
// with the reset, its lease (20 s) is held and never expires, it is not
// flagged stuck (stuck.after 10 s), no attempt is charged, and at the reset
// "continue" goes into the same conversation, which finishes the task green.
func TestLimitWaitsForTheResetWithEachCLI(t *testing.T) {
	t.Parallel()
	for _, cli := range limitCLIs {
		t.Run(cli.name, func(t *testing.T) {
			parallel(t)
			lw := &modelstub.LimitWindow{Turn: 1, For: cli.reset()}
			rules := append([]modelstub.Rule{lw.Rule()}, modelstub.PhaseScript(modelstub.ScriptOptions{
				Code: []modelstub.ToolUse{modelstub.Read("calc.go"), modelstub.Write("calc.go", project.CalcFixed)},
			})...)
			b, tk := limitSetup(t, cli, rules, func(cfg *config.Config) {
				if !cli.shown {
					cfg.Limits.LimitWait.Duration = cli.reset()
				}
				cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = 20*time.Second, 15*time.Second
				cfg.Stuck.After.Duration = 10 * time.Second
			})
			limited := b.waitEvent(t, tk.ID, 4*time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionLimited })
			reset := lw.ResetAt()
			require.False(t, reset.IsZero())
			require.Equal(t, task.ReasonProviderLimit, limited.Reason)
			b.barrier(t)
			tv := taskView(t, b.c, tk.ID)
			require.True(t, strings.HasPrefix(tv.Flag, coord.FlagLimited), tv.Flag)
			require.Contains(t, limited.Text, tv.LimitReset.Format(time.TimeOnly))
			// The reset shown is the provider's: to the minute where the
			// CLI shows one (Codex), the wait from the limit's report
			// where it shows none.
			require.False(t, tv.LimitReset.Before(reset.Add(-time.Second)), "reset %s shown as %s", reset, tv.LimitReset)
			require.False(t, tv.LimitReset.After(reset.Add(61*time.Second)), "reset %s shown as %s", reset, tv.LimitReset)
			t.Logf("%s: limited at %s, reset %s, shown %s: %s", cli.name, limited.At.Format(time.TimeOnly), reset.Format(time.TimeOnly),
				tv.LimitReset.Format(time.TimeOnly), limited.Text)
			waiting(t) // until the reset

			resumed := b.waitEvent(t, tk.ID, 3*time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionLimitReset })
			require.False(t, resumed.At.Before(reset.Add(-time.Second)), "resumed at %s before the reset %s", resumed.At, reset)
			if cli.retries {
				require.Contains(t, resumed.Text, "retries by itself", "nothing is typed into a CLI that retries itself")
			}
			last := b.waitEvent(t, tk.ID, 4*time.Minute, ended)
			require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
			got, err := b.st.TaskGet(t.Context(), tk.ID)
			require.NoError(t, err)
			require.Equal(t, 1, got.Attempt, "the limit cost no attempt:\n%s", b.dump())
			sessions := 0
			for _, e := range b.events {
				require.NotEqual(t, task.EvLeaseExpired, e.Kind, b.dump())
				require.False(t, e.Kind == task.EvRefusal && e.Reason == task.ReasonStuck, "flagged stuck while limited:\n%s", b.dump())
				if e.Kind == task.EvSessionLaunched {
					sessions++
				}
			}
			require.Equal(t, 1, sessions, "the same session went on:\n%s", b.dump())
			if cli.retries {
				for _, req := range b.srv.Requests() {
					for _, m := range req.Messages {
						require.NotEqual(t, "continue", strings.TrimSpace(m.Text), "typed into a CLI that retried itself")
					}
				}
			}
		})
	}
}

// With [limits] on_limit = "handoff:codex", a Claude Code task whose
// provider shows its limit moves to Codex with its continuity, and
// finishes there green, with no attempt charged.
func TestLimitHandsOffClaudeToCodex(t *testing.T) {
	parallel(t)
	codexBin := agentcli.Codex.Require(t)
	lw := &modelstub.LimitWindow{Turn: 1, For: time.Hour}
	limitOnClaude := lw.Rule()
	when := limitOnClaude.When
	limitOnClaude.When = func(req modelstub.Request) bool { return req.API == modelstub.APIMessages && when(req) }
	rules := append([]modelstub.Rule{limitOnClaude}, modelstub.PhaseScript(modelstub.ScriptOptions{
		Code: []modelstub.ToolUse{modelstub.Read("calc.go"), modelstub.Write("calc.go", project.CalcFixed)},
	})...)
	b, tk := limitSetup(t, limitCLIs[0], rules, func(cfg *config.Config) {
		cfg.Limits.OnLimit = "handoff:codex"
	})
	// Codex against the same stub.
	spec := b.cfg.Harness["codex"]
	spec.Argv = append([]string{codexBin}, spec.Argv[1:]...)
	env := seedCodex(t, t.TempDir(), b.srvBase, b.root)
	for k, v := range b.cfg.Harness["claude"].SetEnv {
		if strings.HasPrefix(k, "GO") {
			env[k] = v
		}
	}
	spec.SetEnv = env
	b.stop()
	b.cfg.Harness["codex"] = spec
	b.start(t)

	rq := b.waitEvent(t, tk.ID, 4*time.Minute, func(e task.Event) bool { return e.Kind == task.EvTaskRequeued })
	require.Equal(t, task.ReasonProviderLimit, rq.Reason, b.dump())
	require.Contains(t, rq.Text, "harness codex")
	last := b.waitEvent(t, tk.ID, 5*time.Minute, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	got, err := b.st.TaskGet(t.Context(), tk.ID)
	require.NoError(t, err)
	require.Equal(t, "codex", got.Harness)
	require.Equal(t, 1, got.Attempt, b.dump())
	// The brief Codex got carries the Claude session's continuity.
	var brief string
	for _, req := range b.srv.Requests() {
		if req.API != modelstub.APIResponses {
			continue
		}
		if br, ok := modelstub.FindBrief(req); ok {
			brief = req.Messages[br.Index].Text
		}
	}
	require.Contains(t, brief, task.HeadingContinuity)
	require.Contains(t, brief, "Handed off to harness codex", "the continuity of the limited session:\n%s", brief)
}

// limitSetup is claudeSetup for any of the CLIs: the project, the stub,
// the store, one signed task on cli's harness, and a coordinator.
func limitSetup(t *testing.T, cli limitCLI, rules []modelstub.Rule, tweak func(*config.Config)) (*bundle, task.Task) {
	t.Helper()
	bin := cli.bin(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the verify command needs the go tool on PATH")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, project.WriteProject(root))
	b := &bundle{root: root, home: t.TempDir()}
	b.srv = modelstub.New(rules)
	b.srv.Logf = t.Logf
	base, err := b.srv.Start()
	require.NoError(t, err)
	b.srvBase = base
	t.Cleanup(func() { require.NoError(t, b.srv.Close()) })
	b.repo, err = repo.Open(root)
	require.NoError(t, err)
	b.st, err = sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	t.Cleanup(func() { b.st.Close() })
	tk, err := coord.Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
		Verify: project.VerifyCommand, Harness: cli.harness, Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, time.Now())
	require.NoError(t, err)
	require.NoError(t, b.st.TaskInsert(t.Context(), signedTask(t, tk)))

	b.cfg = config.Default()
	spec := b.cfg.Harness[cli.harness]
	if cli.seed == nil {
		worktree := filepath.Join(b.repo.Root, filepath.FromSlash(repo.WorktreesDir), string(tk.ID))
		require.NoError(t, modelstub.SeedHome(b.home, worktree))
		spec = modelstub.Harness(spec, bin, b.home, base)
	} else {
		spec.Argv = append(append([]string{bin}, cli.args...), spec.Argv[1:]...)
		spec.SetEnv = cli.seed(t, b.home, base, root)
	}
	spec.SetEnv["GOCACHE"] = goEnv(t, goBin, "GOCACHE")
	spec.SetEnv["GOTOOLCHAIN"] = "local"
	if cli.ownGrace > 0 {
		spec.OwnGrace = session.Duration{Duration: cli.ownGrace}
	}
	b.cfg.Harness[cli.harness] = spec
	b.cfg.Pane = config.Pane{Cols: 120, Rows: 40}
	b.cfg.Lease.Tick.Duration = 100 * time.Millisecond
	if tweak != nil {
		tweak(&b.cfg)
	}
	b.start(t)
	return b, tk
}

// selfRetry is a refusal a real CLI retries by itself, answered by its
// stub for longer than the test's stuck.after (20 s), so a session taken
// for stalled while its CLI retries would be flagged.
type selfRetry struct {
	cli    string // a name in limitCLIs
	kind   modelstub.LimitKind
	window time.Duration
	want   session.LimitKind
}

var selfRetries = map[string]selfRetry{
	// opencode retries a 503 server_is_overloaded at its retry-after.
	"opencode-overloaded": {cli: "opencode", kind: modelstub.LimitOverloaded, window: 45 * time.Second, want: session.LimitOverloaded},
	// Claude Code 2.1.332 waits by itself for a 5-hour limit's reset
	// about a minute ahead ("retrying in 53s (1:50pm) · attempt 1/10").
	// 35 s: longer than stuck.after and than its limitGrace and lease
	// together (30 s), so a wait that did not hold the lease would lose it.
	"claude-usage": {cli: "claude", kind: modelstub.LimitUsage, window: 35 * time.Second, want: session.LimitUsage},
}

// Each CLI, its stub refusing the phase's second request as it would
// retry by itself, retries and says so: the session waits while its retry
// shows, is never flagged stuck (stuck.after 20 s), its lease never
// expires, nothing is typed into it, no attempt is charged, and the CLI's
// own retry after the refusal ends the wait and finishes the task green in
// the same session.
func TestRefusalTheCLIRetriesIsNotStuck(t *testing.T) {
	t.Parallel()
	for name, sr := range selfRetries {
		t.Run(name, func(t *testing.T) {
			parallel(t)
			for _, cli := range limitCLIs {
				if cli.name == sr.cli {
					testSelfRetry(t, cli, sr)
					return
				}
			}
			t.Fatalf("no CLI %q", sr.cli)
		})
	}
}

func testSelfRetry(t *testing.T, cli limitCLI, sr selfRetry) {
	overloadFor := sr.window
	lw := &modelstub.LimitWindow{Turn: 1, For: overloadFor, Kind: sr.kind}
	rules := append([]modelstub.Rule{lw.Rule()}, modelstub.PhaseScript(modelstub.ScriptOptions{
		Code: []modelstub.ToolUse{modelstub.Read("calc.go"), modelstub.Write("calc.go", project.CalcFixed)},
	})...)
	b, tk := limitSetup(t, cli, rules, func(cfg *config.Config) {
		cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = 20*time.Second, 15*time.Second
		// A renewal every 5 s: a launch slowed by a loaded machine
		// must not use up the default 12 before the refusal.
		cfg.Lease.MaxRenewals = 60
		cfg.Stuck.After.Duration = 20 * time.Second
	})
	last := b.waitEvent(t, tk.ID, 4*time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionLimited || ended(e) })
	if !ended(last) {
		waiting(t) // while the CLI retries
		last = b.waitEvent(t, tk.ID, 4*time.Minute, ended)
	}
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	reset := lw.ResetAt()
	require.False(t, reset.IsZero(), "the stub never refused")
	overloaded, after := 0, 0
	for _, req := range b.srv.Requests() {
		for _, m := range req.Messages {
			require.NotEqual(t, "continue", strings.TrimSpace(m.Text), "typed into a CLI that retried itself")
		}
		if req.At.Before(reset) && req.At.After(reset.Add(-overloadFor-time.Second)) {
			overloaded++
		} else if !req.At.Before(reset) {
			after++
		}
	}
	require.Positive(t, overloaded)
	require.Positive(t, after, "the CLI's own retry after the overload")
	got, err := b.st.TaskGet(t.Context(), tk.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.Attempt, "the refusal cost no attempt:\n%s", b.dump())
	sessions, limited := 0, 0
	for _, e := range b.events {
		require.NotEqual(t, task.EvLeaseExpired, e.Kind, b.dump())
		require.False(t, e.Kind == task.EvRefusal && e.Reason == task.ReasonStuck, "flagged stuck while the CLI retried:\n%s", b.dump())
		switch e.Kind {
		case task.EvSessionLaunched:
			sessions++
		case task.EvSessionLimited:
			limited++
			require.Contains(t, e.Text, string(sr.want))
			t.Logf("%s: %s", e.At.Format(time.TimeOnly), e.Text)
		}
	}
	require.Equal(t, 1, sessions, "the same session went on:\n%s", b.dump())
	require.Positive(t, limited, "the refusal shown as a wait:\n%s", b.dump())
	gone := false
	for _, e := range b.events {
		if e.Kind == task.EvSessionLimitReset {
			gone = true
			require.Contains(t, e.Text, "retries by itself", "nothing typed at the end of the wait")
			require.False(t, e.At.Before(reset), "the wait ended at %s, before the refusal did (%s)", e.At, reset)
		}
	}
	require.True(t, gone, b.dump())
	t.Logf("%s: refused until %s; %d refusals, %d answers after", cli.name, reset.Format(time.TimeOnly), overloaded, after)
}
