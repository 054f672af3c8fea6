package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/probe"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// `harness check` on the built-in Claude Code harnesses, run against the
// model stub with the real CLI, is green: the ready marker matches and the
// screen settles, nothing unmasked changes while idle, typed text shows and
// the submit key is taken; the installed version is in the tested range.
// The one-shot claude-print is confirmed as soon as it runs.
func TestHarnessCheckClaudeIsGreen(t *testing.T) {
	t.Parallel()
	bin := claudecli.Require(t)
	for _, name := range []string{"claude", "claude-print"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := modelstub.New(modelstub.PhaseScript(modelstub.ScriptOptions{}))
			base, err := srv.Start()
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close() })
			home, dir := t.TempDir(), t.TempDir()
			require.NoError(t, modelstub.SeedHome(home, dir))
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
