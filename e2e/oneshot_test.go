package e2e

import (
	"context"
	"encoding/json"
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
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// oneShotUsage is what the stub reports for every reply.
var oneShotUsage = modelstub.Usage{InputTokens: 1000, OutputTokens: 50, CacheReadInputTokens: 200}

// oneShotAgent is a one-shot agent CLI's built-in harness and how to point
// it at the stub.
type oneShotAgent struct {
	harness string
	cli     agentcli.CLI
	// args go after the binary, before the built-in argv's own.
	args []string
	seed func(t *testing.T, home, base, worktree string) map[string]string
}

var oneShotAgents = []oneShotAgent{
	{harness: "claude-print",
		seed: func(t *testing.T, home, base, worktree string) map[string]string {
			require.NoError(t, modelstub.SeedHome(home, worktree))
			return modelstub.ClaudeSetEnv(home, base)
		}},
	{harness: "codex-exec", cli: agentcli.Codex,
		seed: func(t *testing.T, home, base, worktree string) map[string]string {
			codexHome := filepath.Join(home, ".codex")
			require.NoError(t, modelstub.SeedCodexHome(codexHome, base, "gpt-stub", worktree))
			return modelstub.CodexSetEnv(codexHome)
		}},
	{harness: "gemini-print", cli: agentcli.Gemini, args: []string{"-m", modelstub.GeminiModel},
		seed: func(t *testing.T, home, base, _ string) map[string]string {
			require.NoError(t, modelstub.SeedGeminiHome(home))
			return modelstub.GeminiSetEnv(home, base)
		}},
	{harness: "opencode-run", cli: agentcli.OpenCode,
		seed: func(t *testing.T, home, base, _ string) map[string]string {
			require.NoError(t, modelstub.SeedOpenCodeHome(home, base))
			return modelstub.OpenCodeSetEnv(home)
		}},
}

// TestOneShotAgentsRunATask runs a task through every phase on each
// one-shot agent CLI's built-in harness (claude -p, codex exec, gemini -p,
// opencode run) against its provider's stub: each phase's session gets its brief as
// an argument, the CLI's shell tool writes the artifact and the sentinel,
// the CLI exits and the phase finishes; implement fixes the code and runs
// the tests; the verify gate goes green and the task awaits review. A
// correction recorded during frame reaches every later brief, once in
// each, above the plan. The usage the console read from the CLI's own
// records equals what the stub reported.
func TestOneShotAgentsRunATask(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the verify command needs the go tool on PATH")
	}
	for _, a := range oneShotAgents {
		t.Run(a.harness, func(t *testing.T) {
			parallel(t)
			var bin string
			if a.harness == "claude-print" {
				bin = claudecli.Require(t)
			} else {
				bin = a.cli.Require(t)
			}
			root, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			require.NoError(t, project.WriteProject(root))
			srv := modelstub.New(modelstub.PhaseScript(modelstub.ScriptOptions{
				Usage: oneShotUsage,
				Code:  []modelstub.ToolUse{modelstub.Read("calc.go"), modelstub.Write("calc.go", project.CalcFixed)},
			}))
			srv.Logf = t.Logf
			base, err := srv.Start()
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, srv.Close()) })

			r, err := repo.Open(root)
			require.NoError(t, err)
			st, err := sqlite.Open(sqlite.DefaultPath(root))
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			tk, err := coord.Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
				Verify: project.VerifyCommand, Harness: a.harness}, r, time.Now())
			require.NoError(t, err)
			require.NoError(t, st.TaskInsert(t.Context(), signedTask(t, tk)))
			worktree := filepath.Join(r.Root, filepath.FromSlash(repo.WorktreesDir), string(tk.ID))

			cfg := config.Default()
			spec, ok := cfg.Harness[a.harness]
			require.True(t, ok, "built-in harness %s", a.harness)
			spec.Argv = append(append([]string{bin}, a.args...), spec.Argv[1:]...)
			spec = spec.Expand(map[string]string{"model": "claude-sonnet-4-5"})
			spec.SetEnv = a.seed(t, t.TempDir(), base, worktree)
			spec.SetEnv["GOCACHE"] = goEnv(t, goBin, "GOCACHE")
			spec.SetEnv["GOMODCACHE"] = goEnv(t, goBin, "GOMODCACHE")
			spec.SetEnv["GOTOOLCHAIN"] = "local"
			cfg.Harness[a.harness] = spec
			cfg.Lease.Tick.Duration = 100 * time.Millisecond
			b := &bundle{root: root, srv: srv, st: st, repo: r, cfg: cfg}
			b.start(t)

			const correction = "Keep the signatures of Add and Mul unchanged."
			b.waitEvent(t, tk.ID, 3*time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionLaunched })
			_, err = b.c.Do(t.Context(), coord.Command{Kind: coord.CmdCorrect, TaskID: tk.ID, Text: correction, Author: "e2e"})
			require.NoError(t, err)
			end := b.waitEvent(t, tk.ID, 6*time.Minute, ended)
			require.Equal(t, task.EvTaskAwaiting, end.Kind, "the task awaits review:\n%s", b.dump())

			ctx := context.Background()
			arts, err := st.ArtifactList(ctx, tk.ID)
			require.NoError(t, err)
			sealed := map[task.Phase]bool{}
			for _, art := range arts {
				sealed[art.Phase] = true
			}
			for _, p := range task.Phases {
				require.True(t, sealed[p], "phase %s's artifact sealed", p)
			}
			vs, err := st.VerdictList(ctx, tk.ID)
			require.NoError(t, err)
			require.NotEmpty(t, vs)
			require.Equal(t, verify.StatusOK, vs[len(vs)-1].Verdict.Status, "the last verdict: %s", vs[len(vs)-1].Verdict.Line())

			// The briefs as the CLI sent them: frame's came before the
			// correction; each later phase's holds it once.
			briefs := map[task.Phase]string{}
			for _, req := range srv.Requests() {
				if bf, ok := modelstub.FindBrief(req); ok {
					briefs[bf.Phase] = req.Messages[bf.Index].Text
				}
			}
			require.NotContains(t, briefs[task.PhaseFrame], correction, "frame's brief came before the correction")
			for _, p := range task.Phases[1:] {
				b := briefs[p]
				i := strings.Index(b, task.HeadingDecisions)
				require.GreaterOrEqual(t, i, 0, "phase %s's brief has its decisions", p)
				dec := b[i+len(task.HeadingDecisions):]
				dec = dec[:strings.Index(dec, "\n## ")]
				require.Equal(t, 1, strings.Count(dec, correction), "phase %s's brief holds the correction once, under its decisions:\n%s", p, b)
				require.Less(t, i, strings.Index(b, task.HeadingPlan), "above the plan")
			}

			// Usage: what the CLI recorded, as the console read it, is
			// what the stub reported to the CLI's main loop.
			var want usage.Tokens
			for _, e := range srv.Exchanges() {
				if strings.HasPrefix(e.Rule, "phase ") {
					want = want.Add(usage.Tokens{Input: int64(oneShotUsage.InputTokens), Output: int64(oneShotUsage.OutputTokens),
						CacheRead: int64(oneShotUsage.CacheReadInputTokens)})
				}
			}
			evs, err := st.EventList(ctx, store.EventListParams{TaskID: tk.ID})
			require.NoError(t, err)
			var got usage.Tokens
			for _, e := range evs {
				if e.Kind == task.EvUsage {
					var d coord.UsageData
					if json.Unmarshal(e.Data, &d) == nil {
						tk, _ := d.Totals.Sum()
						got = got.Add(tk)
					}
				}
			}
			require.NotZero(t, want.Input)
			require.Equal(t, want, got, "usage recorded equals the stub's")
		})
	}
}
