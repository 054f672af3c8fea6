package modelstub

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agentcli"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// stubUsage is what every scripted reply reports, so each CLI's own
// records can be checked against known figures.
var stubUsage = Usage{InputTokens: 1000, OutputTokens: 50, CacheReadInputTokens: 200}

// oneShot is one agent CLI run once on a brief, against the stub.
type oneShot struct {
	cli agentcli.CLI
	// seed prepares home for the CLI and returns its variables.
	seed func(t *testing.T, b bundle) map[string]string
	// argv is the command line after the binary; the brief is appended.
	argv []string
	// records reads the CLI's own usage records of the run in b.work.
	records func(t *testing.T, b bundle, env []string, since time.Time) []usage.Record
}

var oneShots = []oneShot{
	{
		cli: agentcli.Codex,
		seed: func(t *testing.T, b bundle) map[string]string {
			codexHome := filepath.Join(b.home, ".codex")
			require.NoError(t, SeedCodexHome(codexHome, b.base, "gpt-stub", b.work))
			return CodexSetEnv(codexHome)
		},
		argv: []string{"exec", "--skip-git-repo-check", "-s", "workspace-write", "--"},
		records: func(t *testing.T, b bundle, env []string, _ time.Time) []usage.Record {
			return followAll(t, filepath.Join(usage.CodexHome(env), "sessions"), usage.CodexRollout(b.work))
		},
	},
	{
		cli: agentcli.Gemini,
		seed: func(t *testing.T, b bundle) map[string]string {
			require.NoError(t, SeedGeminiHome(b.home))
			return GeminiSetEnv(b.home, b.base)
		},
		argv: []string{"-m", GeminiModel, "--yolo", "-p"},
		records: func(t *testing.T, b bundle, env []string, _ time.Time) []usage.Record {
			return followAll(t, filepath.Join(usage.GeminiDir(env), "tmp"), usage.GeminiChat(b.work, time.Time{}))
		},
	},
	{
		cli: agentcli.OpenCode,
		seed: func(t *testing.T, b bundle) map[string]string {
			require.NoError(t, SeedOpenCodeHome(b.home, b.base))
			return OpenCodeSetEnv(b.home)
		},
		argv: []string{"run"},
		records: func(t *testing.T, b bundle, env []string, since time.Time) []usage.Record {
			recs, err := usage.OpenCodeRecords(t.Context(), usage.OpenCodeDataDir(env), b.work, since)
			require.NoError(t, err)
			return recs
		},
	},
}

// followAll reads every file under root with parse, once.
func followAll(t *testing.T, root string, parse usage.LineParser) []usage.Record {
	t.Helper()
	var out []usage.Record
	f, err := usage.FollowWith(root, time.Time{}, nil, func(string) usage.LineParser { return parse }, func(r usage.Record) { out = append(out, r) })
	require.NoError(t, err)
	// Files already there are followed from their end: read them whole.
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(path)
			for _, line := range strings.Split(string(data), "\n") {
				if r, ok := parse([]byte(line)); ok {
					out = append(out, r)
				}
			}
		}
		return nil
	})
	require.NoError(t, f.Close())
	return dedupe(out)
}

func dedupe(recs []usage.Record) []usage.Record {
	seen := map[string]bool{}
	var out []usage.Record
	for _, r := range recs {
		if r.MessageID != "" && seen[r.MessageID] {
			continue
		}
		seen[r.MessageID] = true
		out = append(out, r)
	}
	return out
}

// TestOneShotPhase runs each one-shot agent CLI (codex exec, gemini -p,
// opencode run) on a frame brief against the stub: the CLI's own shell
// tool writes the artifact and the sentinel, it exits 0, and the usage it
// recorded is the stub's, reply for reply.
func TestOneShotPhase(t *testing.T) {
	t.Parallel()
	for _, o := range oneShots {
		t.Run(o.cli.Command, func(t *testing.T) {
			t.Parallel()
			bin := o.cli.Require(t)
			b := setup(t, PhaseScript(ScriptOptions{Usage: stubUsage}))
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.home, "TMPDIR=" + os.TempDir()}
			for k, v := range o.seed(t, b) {
				env = append(env, k+"="+v)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(append([]string(nil), o.argv...), renderBrief(task.PhaseFrame))...)
			cmd.Dir, cmd.Env = b.work, env
			started := time.Now()
			out, err := cmd.CombinedOutput()
			t.Logf("%s took %v:\n%s", o.cli.Command, time.Since(started).Round(100*time.Millisecond), out)
			require.NoError(t, err)

			art, err := os.ReadFile(filepath.Join(b.work, task.ArtifactPath(task.PhaseFrame)))
			require.NoError(t, err)
			require.JSONEq(t, task.Example(task.PhaseFrame), string(art))
			_, err = os.Stat(filepath.Join(b.work, task.SentinelPath))
			require.NoError(t, err)

			scripted := 0
			for _, e := range b.srv.Exchanges() {
				if strings.HasPrefix(e.Rule, "phase ") {
					scripted++
				}
			}
			require.Equal(t, 3, scripted, "artifact, sentinel, closing text")
			recs := o.records(t, b, env, started.Add(-time.Second))
			require.Len(t, recs, scripted, "one usage record per scripted reply: %+v", recs)
			for _, r := range recs {
				require.Equal(t, usage.Tokens{Input: int64(stubUsage.InputTokens), Output: int64(stubUsage.OutputTokens),
					CacheRead: int64(stubUsage.CacheReadInputTokens)}, r.Tokens, "record %+v", r)
			}
		})
	}
}
