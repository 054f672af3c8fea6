package repo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWorktreeAddCreatesLinkedWorktreeOnNewBranch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(b.dir, ".orchestra", "worktrees", "t1"), path)
	require.Equal(t, "task/t1", gitT(t, path, "symbolic-ref", "--short", "HEAD"))
	require.FileExists(t, filepath.Join(path, ".git")) // a linked worktree's .git is a file

	// Opened on its own, it reads HEAD through the common dir.
	wr, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, path, wr.Root)
	head, err := wr.Head()
	require.NoError(t, err)
	require.Equal(t, b.first, head)
	bh, err := b.r.BranchHead("task/t1")
	require.NoError(t, err)
	require.Equal(t, b.first, bh)

	// Idempotent: a relaunch finds the same worktree and keeps its work.
	writeFile(t, filepath.Join(path, "work.txt"), "in progress\n")
	again, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	require.Equal(t, path, again)
	require.FileExists(t, filepath.Join(path, "work.txt"))

	// The same name on another branch is refused, naming both.
	_, err = b.r.WorktreeAdd("t1", "task/other", "main")
	require.ErrorContains(t, err, "task/t1")
	require.ErrorContains(t, err, "task/other")
}

func TestWorktreeAddChecksOutExistingBranch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	work := commitFile(t, path, "work.txt", "done\n")
	require.NoError(t, b.r.WorktreeRemove(path))
	require.NoDirExists(t, path)
	require.NoError(t, b.r.WorktreeRemove(path), "removing twice is not an error")

	// The branch survived; adding again checks it out rather than
	// recreating it at base.
	again, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	require.Equal(t, work, gitT(t, again, "rev-parse", "HEAD"))
}

func TestWorktreeAddRecreatesWorktreeDeletedByHand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(path))
	again, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	require.Equal(t, path, again)
	require.FileExists(t, filepath.Join(path, "README.md"))
}

func TestWorktreeAddRefusesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, name := range []string{"", "..", "a/b", "-x"} {
		_, err := b.r.WorktreeAdd(name, "task/x", "main")
		require.ErrorContains(t, err, "plain path element", "name %q", name)
	}
	_, err := b.r.WorktreeAdd("x", "bad..branch", "main")
	require.ErrorContains(t, err, "not a valid branch name")
	_, err = b.r.WorktreeAdd("x", "task/x", "no-such-base")
	require.ErrorContains(t, err, "git worktree add")
	require.ErrorContains(t, err, "no-such-base")
}

func TestWorktreeRemoveRefusesMainCheckoutAndStrangers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.ErrorContains(t, b.r.WorktreeRemove(b.dir), "main checkout")
	require.ErrorContains(t, b.r.WorktreeRemove(t.TempDir()), "not a linked worktree")
}

func TestExcludeHidesStateInMainAndLinkedWorktrees(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	writeFile(t, filepath.Join(path, ".orchestra", "done"), "")
	writeFile(t, filepath.Join(b.dir, ".orchestra", "state.db"), "x")

	st, err := VerifiedState(b.dir, "")
	require.NoError(t, err)
	require.NotEmpty(t, st.Dirty, "before Exclude the state shows")

	require.NoError(t, b.r.Exclude(".orchestra/"))
	require.NoError(t, b.r.Exclude(".orchestra/"))
	common := gitT(t, b.dir, "rev-parse", "--git-common-dir")
	data, err := os.ReadFile(filepath.Join(b.dir, common, "info", "exclude"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(data), ".orchestra/\n"))

	for _, dir := range []string{b.dir, path} {
		st, err := VerifiedState(dir, "main")
		require.NoError(t, err)
		require.Empty(t, st.Dirty, dir)
		require.Empty(t, st.Changed, dir)
		require.Empty(t, gitT(t, dir, "status", "--porcelain"), dir)
	}

	// Through a Repo opened on the linked worktree, the same file is used.
	wr, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, wr.Exclude(".orchestra/"))
	data, err = os.ReadFile(filepath.Join(b.dir, common, "info", "exclude"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(data), ".orchestra/\n"))
}
