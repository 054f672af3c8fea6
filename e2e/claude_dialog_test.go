package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Claude Code with an ANTHROPIC_API_KEY it was never told to use opens its
// "Detected a custom API key" dialog: the task needs the operator within
// 10 s, with the dialog's own text, and no attempt beyond the first is
// charged; the operator's answer typed into the pane (up to "Yes", enter)
// lets the launch confirm and the task finish.
func TestClaudeAPIKeyDialogNeedsYou(t *testing.T) {
	t.Parallel()
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
