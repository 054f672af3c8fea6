package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// TestClaudePrintModeUsage runs `claude -p --output-format json` against
// the stub and reads its usage both ways: from the result object and from
// the transcript followed as it grows. Both must match what the stub
// reported; only the transcript names the model that answered.
func TestClaudePrintModeUsage(t *testing.T) {
	parallel(t)
	bin := claudecli.Require(t)
	srv := modelstub.New(modelstub.PhaseScript(modelstub.ScriptOptions{Model: servedModel, Usage: perReply}))
	srv.Logf = t.Logf
	base, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	work, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, project.WriteProject(work))
	home := t.TempDir()
	require.NoError(t, modelstub.SeedHome(home, work))
	env := modelstub.ClaudeEnv(home, base)
	prices := map[string]config.Price{servedModel: servedPrice, "claude-stub-asked": {Input: 1}}

	var mu sync.Mutex
	var followed usage.Totals
	conf := usage.ClaudeConfigDir(env)
	project := usage.ClaudeProjectDir(conf, work)
	f, err := usage.Follow(filepath.Join(conf, "projects"),
		func(p string) bool { return strings.HasPrefix(p, project+string(filepath.Separator)) },
		func(r usage.Record) {
			mu.Lock()
			followed.Add(r, prices)
			mu.Unlock()
		})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	brief := task.HeadingPhase(task.PhasePlan) + "\n" + task.LabelArtifact + " " + task.ArtifactPath(task.PhasePlan) + "\n"
	cmd := exec.CommandContext(ctx, bin, "-p", brief, "--model", "claude-stub-asked",
		"--allowedTools", "Bash", "Edit", "Write", "--output-format", "json")
	cmd.Dir, cmd.Env = work, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "claude -p: %s", stderr.String())
	require.NoError(t, f.Close())

	var n int64
	for _, e := range srv.Exchanges() {
		if e.Rule == "phase plan" {
			n++
		}
	}
	require.Equal(t, int64(3), n, "Write artifact, Write sentinel, closing text")
	want := usage.Tokens{Input: n * int64(perReply.InputTokens), Output: n * int64(perReply.OutputTokens),
		CacheCreation: n * int64(perReply.CacheCreationInputTokens), CacheRead: n * int64(perReply.CacheReadInputTokens)}

	res, err := usage.ParsePrintResult(out, prices)
	require.NoError(t, err)
	require.Equal(t, []string{"claude-stub-asked"}, res.Totals.ModelIDs(), "print mode keys usage by the model asked for")
	require.Equal(t, want, res.Totals.Models["claude-stub-asked"].Tokens)
	require.NotEmpty(t, res.SessionID)

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{servedModel}, followed.ModelIDs(), "the transcript names the model that answered")
	require.Equal(t, want, followed.Models[servedModel].Tokens)
	require.InDelta(t, usage.Cost(servedPrice, want), followed.Models[servedModel].CostUSD, 1e-9)
	t.Logf("print result: %s (CLI's own estimate $%.4f); transcript: %s", res.Totals, res.ReportedCostUSD, followed)
}
