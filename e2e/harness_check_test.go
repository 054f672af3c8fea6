package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/probe"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// `harness check` on the built-in Claude Code harnesses, run against the
// model stub with the real CLI, is green: the ready marker matches and the
// screen settles, nothing unmasked changes while idle, typed text shows and
// the submit key is taken; the installed version is in the tested range.
// The one-shot claude-print is confirmed as soon as it runs. The CLI's
// home trusts no folder the check runs in: the check marks its directory
// trusted, as the product does for its worktrees.
func TestHarnessCheckClaudeIsGreen(t *testing.T) {
	t.Parallel()
	bin := claudecli.Require(t)
	for _, name := range []string{"claude", "claude-print"} {
		t.Run(name, func(t *testing.T) {
			parallel(t)
			srv := modelstub.New(modelstub.PhaseScript(modelstub.ScriptOptions{}))
			base, err := srv.Start()
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close() })
			// The CLI trusts no folder the check knows of (only one
			// elsewhere): the check marks its scratch directory trusted.
			home, dir := t.TempDir(), t.TempDir()
			require.NoError(t, modelstub.SeedHome(home, t.TempDir()))
			spec := modelstub.Harness(session.DefaultSpecs()[name], bin, home, base).
				Expand(map[string]string{"model": "claude-sonnet-4-5"})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, err := probe.Run(ctx, probe.Params{Spec: spec, Dir: dir, Environ: []string{"PATH=" + os.Getenv("PATH")}, Idle: 2 * time.Second})
			require.NoError(t, err)
			require.True(t, rep.Green(), "%+v", rep)
			for _, c := range rep.Checks {
				require.NotEqual(t, probe.Warn, c.Status, "%s: %s\n%s", c.Name, c.Text, rep.Screen)
			}
		})
	}
}

// `harness check` on the built-in harnesses that need no agent CLI, the
// `shell` for a human and the `scripted` demo agent, run as a user would
// (the real binary, in a repository), is green and exits 0.
func TestHarnessCheckShellAndScriptedAreGreen(t *testing.T) {
	parallel(t)
	bin := buildBinary(t, t.TempDir())
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	for _, name := range []string{"shell", "scripted"} {
		cmd := exec.Command(bin, "harness", "check", name, "-C", root, "--idle", "1s")
		cmd.Env = append(os.Environ(), "CI=") // no test environment leaks into the check
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "harness check %s exits 0:\n%s", name, out)
		require.Contains(t, string(out), "harness "+name+" (built in)")
		require.Contains(t, string(out), "\ngreen: ")
		require.NotContains(t, string(out), "✗")
	}
}

// harnessChecked lists the built-in harnesses a test runs `harness check`
// on: TestHarnessCheckClaudeIsGreen, TestHarnessCheckAgentsAreGreen and
// TestHarnessCheckShellAndScriptedAreGreen.
var harnessChecked = []string{"claude", "claude-print", "codex", "codex-exec", "gemini", "gemini-print",
	"opencode", "opencode-run", "shell", "scripted"}

// Every built-in harness has a test that runs `harness check` on it: a new
// built-in without one fails here.
func TestEveryBuiltinHarnessIsChecked(t *testing.T) {
	parallel(t)
	require.ElementsMatch(t, session.BuiltinNames(), harnessChecked)
}
