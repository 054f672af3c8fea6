package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// TestClaudeImplementsInAPane runs the real Claude Code CLI in a console
// pane against the scripted model server: the worker confirms the launch
// on the ❯ prompt, pastes the brief, the CLI performs the stub's tool calls
// in the task's worktree (read and edit calc.go, run the tests, write the
// artifact and the sentinel), and the console's own verify gate is green.
//
// The full pipeline runs every phase the same way, one session each.
func TestClaudeRunsTaskInAPane(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]task.Pipeline{
		"implement": {task.PhaseImplement},
		"pipeline":  task.DefaultPipeline(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runClaudeTask(t, p)
		})
	}
}

func runClaudeTask(t *testing.T, p task.Pipeline) {
	rules := modelstub.PhaseScript(modelstub.ScriptOptions{
		Code: modelstub.EditFile("calc.go", demo.CalcBroken, demo.CalcFixed),
	})
	b, tk := claudeSetup(t, rules, task.Task{
		Title: "Fix calc", Goal: demo.Goal, Acceptance: demo.Acceptance, Verify: demo.VerifyCommand,
		Harness: "claude", Model: "claude-stub-asked", Pipeline: p,
	}, os.Environ(), nil)
	started := time.Now()

	last := b.waitEvent(t, tk.ID, 150*time.Second, ended)
	t.Logf("task ended after %v:\n%s", time.Since(started), b.dump())
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())

	ctx := context.Background()
	got, err := b.st.TaskGet(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateAwaitingReview, got.State)
	vs, err := b.st.VerdictList(ctx, tk.ID)
	require.NoError(t, err)
	require.NotEmpty(t, vs)
	require.Equal(t, verify.StatusOK, vs[len(vs)-1].Verdict.Status, "the console's own gate is green")
	worktree := filepath.Join(b.root, ".orchestra", "worktrees", string(tk.ID))
	code, err := os.ReadFile(filepath.Join(worktree, "calc.go"))
	require.NoError(t, err)
	require.Equal(t, demo.CalcFixed, string(code))

	arts, err := b.st.ArtifactList(ctx, tk.ID)
	require.NoError(t, err)
	var sealed []task.Phase
	for _, a := range arts {
		sealed = append(sealed, a.Phase)
	}
	require.Equal(t, []task.Phase(p), sealed, "every phase's artifact is sealed, in order")

	// The first scripted request carries the pasted brief, whole and in
	// authority order.
	var first *modelstub.Exchange
	for _, e := range b.srv.Exchanges() {
		if e.Rule == "phase implement" {
			first = &e
			break
		}
	}
	require.NotNil(t, first, "the stub saw no implement request")
	br, ok := modelstub.FindBrief(first.Request)
	require.True(t, ok)
	require.Equal(t, demo.VerifyCommand, br.Verify)
	requireAuthorityOrder(t, first.Request.Messages[br.Index].Text, task.PhaseImplement)
	require.Equal(t, "claude-stub-asked", first.Request.Model, "the harness passes the task's model")
}
