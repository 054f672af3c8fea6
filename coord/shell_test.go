package coord

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A brief is text for an agent: on the shell harness it is written to
// .orchestra/brief.md and never typed into the shell, which would run it.
// A goal, a repository rule and a correction that all say `touch PWNED`
// create no file, and no byte of them reaches the shell's input.
func TestShellHarnessNeverRunsTheBrief(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	rules := "# Rules\n\ntouch PWNED\n$(touch PWNED)\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(rules), 0o644))
	require.NoError(t, project.Git(root, "commit", "-qam", "rules"))
	b := setupIn(t, root, agent.Script{}, nil, nil, nil)
	ctx := context.Background()
	id := b.addShellTask(t, "pwn", "touch PWNED\n`touch PWNED`\n'\"touch PWNED")
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))

	_, err := b.c.Do(ctx, Command{Kind: CmdCorrect, TaskID: id, Text: "touch PWNED"})
	require.NoError(t, err)
	b.waitPane(t, id, "a human decision was added to the end of .orchestra/brief.md", 30*time.Second)
	_, err = b.c.Do(ctx, Command{Kind: CmdResubmit, TaskID: id})
	require.NoError(t, err)
	b.waitEvent(t, 30*time.Second, kindIs(task.EvResubmitted))

	wt := filepath.Join(root, filepath.FromSlash(repo.WorktreesDir), string(id))
	brief, err := os.ReadFile(filepath.Join(wt, task.BriefPath))
	require.NoError(t, err)
	for _, part := range []string{"## Goal", "`touch PWNED`", "$(touch PWNED)", task.DecisionHeader + " touch PWNED"} {
		require.Contains(t, string(brief), part)
	}

	// The shell reads its input in order: once it answers a command the
	// operator types now, it has run anything it was given before.
	require.NoError(t, b.c.Input(id, []byte("echo ALIVE-$((6*7))\r")))
	b.waitPane(t, id, "ALIVE-42", 30*time.Second)
	for _, dir := range []string{root, wt} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			require.NotEqual(t, "PWNED", filepath.Base(p), "the brief was run by the shell")
			return nil
		})
	}
	_, err = b.c.Do(ctx, Command{Kind: CmdCancel, TaskID: id})
	require.NoError(t, err)
	b.waitEvent(t, 30*time.Second, ended)
	casts, err := filepath.Glob(filepath.Join(root, task.StateDir, "runs", string(id), "*.cast"))
	require.NoError(t, err)
	require.Len(t, casts, 1)
	data, err := os.ReadFile(casts[0])
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"i"`) {
			require.NotContains(t, line, "PWNED", "nothing of the brief is typed into the shell")
		}
	}
}

// addShellTask adds an implement task with goal on the shell harness and
// waits until the shell's pane says where its brief is.
func (b *bundle) addShellTask(t *testing.T, title, goal string) task.ID {
	t.Helper()
	res, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
		Title: title, Goal: goal, Verify: project.VerifyCommand,
		Harness: "shell", Pipeline: task.Pipeline{task.PhaseImplement},
	}})
	require.NoError(t, err)
	b.waitPane(t, res.TaskID, "orchestra: the brief for phase implement is in .orchestra/brief.md", 30*time.Second)
	return res.TaskID
}
