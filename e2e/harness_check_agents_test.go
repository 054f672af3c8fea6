package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agentcli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/probe"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// `harness check` on the built-in Codex, Gemini CLI and opencode harnesses,
// interactive and one-shot, each real CLI against the stub of its
// provider's API, is green: the ready marker matches and the screen
// settles, nothing unmasked changes while idle, typed text shows and the
// submit key is taken, and the installed version is the tested one.
func TestHarnessCheckAgentsAreGreen(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		harness string
		cli     agentcli.CLI
		args    []string
		seed    func(t *testing.T, home, base, dir string) map[string]string
	}{
		{"codex", agentcli.Codex, nil, seedCodex},
		{"codex-exec", agentcli.Codex, nil, seedCodex},
		{"gemini", agentcli.Gemini, []string{"-m", modelstub.GeminiModel}, seedGemini},
		{"gemini-print", agentcli.Gemini, []string{"-m", modelstub.GeminiModel}, seedGemini},
		{"opencode", agentcli.OpenCode, nil, seedOpenCode},
		{"opencode-run", agentcli.OpenCode, nil, seedOpenCode},
	} {
		t.Run(c.harness, func(t *testing.T) {
			parallel(t)
			bin := c.cli.Require(t)
			srv := modelstub.New(modelstub.PhaseScript(modelstub.ScriptOptions{}))
			base, err := srv.Start()
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close() })
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			spec := session.DefaultSpecs()[c.harness]
			spec.Argv = append(append([]string{bin}, c.args...), spec.Argv[1:]...)
			spec.SetEnv = c.seed(t, t.TempDir(), base, dir)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			rep, err := probe.Run(ctx, probe.Params{Spec: spec, Dir: dir, Environ: []string{"PATH=" + os.Getenv("PATH")}, Idle: 2 * time.Second})
			require.NoError(t, err)
			require.True(t, rep.Green(), "%+v", rep)
			for _, ch := range rep.Checks {
				require.NotEqual(t, probe.Warn, ch.Status, "%s: %s\n%s", ch.Name, ch.Text, rep.Screen)
			}
		})
	}
}

func seedCodex(t *testing.T, home, base, dir string) map[string]string {
	codexHome := filepath.Join(home, ".codex")
	require.NoError(t, modelstub.SeedCodexHome(codexHome, base, "gpt-stub", dir))
	env := modelstub.CodexSetEnv(codexHome)
	env["HOME"] = home
	return env
}

func seedGemini(t *testing.T, home, base, _ string) map[string]string {
	require.NoError(t, modelstub.SeedGeminiHome(home))
	env := modelstub.GeminiSetEnv(home, base)
	env["HOME"] = home
	return env
}

func seedOpenCode(t *testing.T, home, base, _ string) map[string]string {
	require.NoError(t, modelstub.SeedOpenCodeHome(home, base))
	env := modelstub.OpenCodeSetEnv(home)
	env["HOME"] = home
	return env
}
