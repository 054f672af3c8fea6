package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Claude Code with an ANTHROPIC_API_KEY it was never told to use opens its
// "Detected a custom API key" dialog: the task needs the operator within
// 10 s, with the dialog's own text, and no attempt beyond the first is
// charged; the operator's answer typed into the pane (up to "Yes", enter)
// lets the launch confirm and the task finish.
func TestClaudeAPIKeyDialogNeedsYou(t *testing.T) {
	parallel(t)
	rules := modelstub.PhaseScript(modelstub.ScriptOptions{
		Code: modelstub.EditFile("calc.go", project.CalcBroken, project.CalcFixed),
	})
	b, tk := claudeSetup(t, rules, task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
		Harness: "claude", Pipeline: task.Pipeline{task.PhaseImplement},
	}, nil, func(cfg *config.Config) {
		h := cfg.Harness["claude"]
		h.SetEnv["ANTHROPIC_API_KEY"] = "sk-ant-api03-never-approved-by-this-home-1111111111BB"
		cfg.Harness["claude"] = h
	})
	launched := b.waitEvent(t, tk.ID, 2*time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionLaunched })
	needs := b.waitEvent(t, tk.ID, 2*time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionNeedsYou })
	require.Less(t, needs.At.Sub(launched.At), 10*time.Second, b.dump())
	require.Contains(t, needs.Text, "Detected a custom API key in your environment")
	require.Contains(t, needs.Text, "Do you want to use this API key?")
	var flag string
	for _, tv := range b.c.Snapshot().Tasks {
		if tv.Task.ID == tk.ID {
			flag = tv.Flag
			require.Equal(t, 1, tv.Task.Attempt)
		}
	}
	require.True(t, strings.HasPrefix(flag, coord.FlagNeedsYou), flag)

	// The operator answers in focus mode: up to "Yes", enter.
	require.NoError(t, b.c.Input(tk.ID, []byte("\x1b[A")))
	require.NoError(t, b.c.Input(tk.ID, []byte("\r")))
	b.waitEvent(t, tk.ID, time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionAnswered })
	last := b.waitEvent(t, tk.ID, 150*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	got, err := b.st.TaskGet(context.Background(), tk.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.Attempt, "the dialog cost no attempt:\n%s", b.dump())
}

// Claude Code in a home that trusts no folder (onboarding done, the key
// approved, no projects at all) starts in the task's worktree without its
// "trust this folder?" dialog: the worktree is the product's own and is
// marked trusted in the CLI's config before it starts. The launch is
// confirmed, nothing needs the operator, and the task finishes on its
// first attempt; the config gained that worktree's entry and kept the rest.
func TestClaudeWorktreeIsTrusted(t *testing.T) {
	parallel(t)
	rules := modelstub.PhaseScript(modelstub.ScriptOptions{
		Code: modelstub.EditFile("calc.go", project.CalcBroken, project.CalcFixed),
	})
	var home string
	b, tk := claudeSetup(t, rules, task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
		Harness: "claude", Pipeline: task.Pipeline{task.PhaseImplement},
	}, nil, func(cfg *config.Config) {
		home = cfg.Harness["claude"].SetEnv["HOME"]
		for _, path := range []string{filepath.Join(home, ".claude.json"), filepath.Join(home, modelstub.ConfigDirName, ".claude.json")} {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var c map[string]any
			require.NoError(t, json.Unmarshal(data, &c))
			delete(c, "projects")
			data, err = json.Marshal(c)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data, 0o600))
		}
	})
	last := b.waitEvent(t, tk.ID, 3*time.Minute, func(e task.Event) bool {
		require.NotEqual(t, task.EvSessionNeedsYou, e.Kind, "a dialog showed: %s\n%s", e.Text, b.dump())
		return ended(e)
	})
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	got, err := b.st.TaskGet(context.Background(), tk.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.Attempt, b.dump())

	data, err := os.ReadFile(filepath.Join(home, modelstub.ConfigDirName, ".claude.json"))
	require.NoError(t, err)
	var c struct {
		HasCompletedOnboarding bool `json:"hasCompletedOnboarding"`
		Projects               map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	require.NoError(t, json.Unmarshal(data, &c))
	require.True(t, c.HasCompletedOnboarding)
	worktree := filepath.Join(b.repo.Root, filepath.FromSlash(repo.WorktreesDir), string(tk.ID))
	require.True(t, c.Projects[worktree].HasTrustDialogAccepted, "%s", data)
}
