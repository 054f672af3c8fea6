package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// cliIn runs the command in process with stdin.
func cliIn(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// Global flags work before the subcommand as after it, as with git and go.
func TestGlobalFlagsBeforeOrAfterTheSubcommand(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	for _, args := range [][]string{{"-C", root, "status"}, {"status", "-C", root}, {"-C=" + root, "status"}, {"--no-anim", "-C", root, "status"}} {
		code, stdout, stderr := cli(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.Contains(t, stdout, "no tasks: no store in this repository: ", args)
	}
	code, stdout, stderr := cli(t, "-C", root, "add", "--title", "T", "--goal", "G", "--verify", "true")
	require.Equal(t, 0, code, stderr)
	id := strings.TrimSpace(stdout)
	_, stdout, _ = cli(t, "-C", root, "status", "--json")
	require.Contains(t, stdout, id)
}

// With no terminal the console says what to use instead, at once.
func TestConsoleWithoutATerminalSaysToUseHeadless(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	for _, args := range [][]string{{"-C", root}, {"console", "-C", root}, {"run", "-C", root}, {"demo", "--fast"}} {
		code, _, stderr := cli(t, args...)
		require.Equal(t, 1, code, args)
		require.Contains(t, stderr, "the console needs a terminal", args)
		require.Contains(t, stderr, "--headless", args)
	}
	_, err := os.Stat(filepath.Join(root, task.StateDir))
	require.True(t, os.IsNotExist(err), "nothing was created")
}

// add excludes .orchestra/ before it creates the store there, so the
// repository stays clean.
func TestAddLeavesTheRepositoryClean(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, _, stderr := cli(t, "add", "-C", root, "--title", "T", "--goal", "G", "--verify", "true")
	require.Equal(t, 0, code, stderr)
	require.DirExists(t, filepath.Join(root, task.StateDir))
	require.Empty(t, gitIn(t, root, "status", "--porcelain", "--untracked-files=all"))
}

// endedTask adds a task, gives it a branch with one commit in its own
// worktree, and marks it failed, as a run that gave up leaves it.
func endedTask(t *testing.T, root string) (task.ID, string, string) {
	t.Helper()
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "Fix calc", "--goal", project.Goal, "--verify", project.VerifyCommand)
	require.Equal(t, 0, code, stderr)
	id := task.ID(strings.TrimSpace(stdout))
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	tk, err := st.TaskGet(ctx, id)
	require.NoError(t, err)
	r, err := repo.Open(root)
	require.NoError(t, err)
	wt, err := r.WorktreeAdd(string(id), tk.Branch, tk.BaseCommit)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(wt, "calc.go"), []byte(project.CalcFixed), 0o644))
	_, _, err = repo.CommitAll(wt, "half the work")
	require.NoError(t, err)
	next := tk
	next.State, next.Reason, next.Attempt = task.StateFailed, string(task.ReasonAttemptsExhausted), 3
	require.NoError(t, st.TaskUpdate(ctx, store.TaskUpdateParams{Task: next, ExpectState: tk.State}))
	return id, tk.Branch, wt
}

// prune never removes unmerged work unless told: --all asks, and only yes
// removes it.
func TestPruneKeepsUnmergedWorkUnlessTold(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	id, branch, wt := endedTask(t, root)

	code, stdout, stderr := cli(t, "prune", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "nothing to prune")
	require.Contains(t, stdout, "kept 1 task's branch with work not merged into main")
	require.Contains(t, stdout, id.Short()+" "+branch+" (failed, Fix calc): 1 commit not merged into main")
	require.DirExists(t, wt)

	code, stdout, _ = cliIn(t, "n\n", "prune", "--all", "-C", root)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "Remove 1 task's branch with unmerged work? [y/N]")
	require.Contains(t, stdout, "kept them")
	require.True(t, branchExists(t, root, branch))

	code, stdout, _ = cliIn(t, "", "prune", "--all", "--dry-run", "-C", root)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "would remove "+id.Short())
	require.True(t, branchExists(t, root, branch))

	code, stdout, stderr = cliIn(t, "y\n", "prune", "--all", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "removed "+id.Short()+" "+branch)
	require.False(t, branchExists(t, root, branch))
	require.NoDirExists(t, wt)
	require.Equal(t, 1, strings.Count(gitIn(t, root, "worktree", "list"), "\n")+1, "only the main checkout is left")

	_, stdout, _ = cli(t, "prune", "-C", root)
	require.Contains(t, stdout, "nothing to prune")
}

// retry and approve work with no console: the same transition the console
// makes, written to the store, picked up by the next run.
func TestRetryWithoutAConsole(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	id, _, _ := endedTask(t, root)
	code, _, stderr := cli(t, "approve", "-C", root, id.Short())
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "cannot approve task "+id.Short()+": it is failed, not awaiting review")

	code, stdout, stderr := cli(t, "retry", "-C", root, id.Short())
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "queued again for phase frame with a fresh attempt budget")
	_, stdout, _ = cli(t, "status", "-C", root)
	require.Regexp(t, string(id)+`\s+Fix calc\s+queued\s+frame\s+0`, stdout)

	code, _, stderr = cli(t, "retry", "-C", root, id.Short())
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "only a failed or cancelled task can be retried")
	code, _, stderr = cli(t, "merge", "-C", root, id.Short())
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "only an approved (completed) task is merged")
}

func branchExists(t *testing.T, root, branch string) bool {
	t.Helper()
	return exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Run() == nil
}

// config --defaults prints every setting, commented; config prints the
// repository's own.
func TestConfigPrintsEverySetting(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := cli(t, "config", "--defaults")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{"[lease]", "[stuck]", "[pane]", "# [[slots]]", "# [harness.claude]", "[finalise]\n", "merge = \"ff\""} {
		require.Contains(t, stdout, want)
	}
	root := calcRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[finalise]\nmerge = \"no-ff\"\n"), 0o644))
	code, stdout, stderr = cli(t, "-C", root, "config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "merge = \"no-ff\"")
}

// The headless formats are one at a time.
func TestRunHeadlessFormatsAreExclusive(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, _, stderr := cli(t, "run", "-C", root, "--headless", "--stable", "--json")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--stable and --json are two different formats")
}
