package repo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDiffAgainstMergeBase(t *testing.T) {
	b := setup(t)
	gitT(t, b.dir, "checkout", "-q", "-b", "feature")
	commitFile(t, b.dir, "a.go", "package a\n")
	gitT(t, b.dir, "checkout", "-q", "main")
	commitFile(t, b.dir, "main-only.txt", "later on main\n")

	mb, err := b.r.MergeBase("main", "feature")
	require.NoError(t, err)
	require.Equal(t, b.first, mb)
	out, err := b.r.Diff(mb, "feature")
	require.NoError(t, err)
	require.Contains(t, string(out), "+++ b/a.go")
	require.NotContains(t, string(out), "main-only.txt", "a change on main after the branch parted is not the task's")
}

func TestCommitBefore(t *testing.T) {
	b := setup(t)
	sha, err := b.r.CommitBefore("main", time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, b.first, sha)
	sha, err = b.r.CommitBefore("main", time.Unix(1, 0))
	require.NoError(t, err)
	require.Empty(t, sha, "nothing was committed in 1970")
}

func TestDiffWorktreeSeesUntrackedFilesAndLeavesTheIndexAlone(t *testing.T) {
	b := setup(t)
	writeFile(t, filepath.Join(b.dir, "README.md"), "hello\nworld\n")
	writeFile(t, filepath.Join(b.dir, "new.txt"), "brand new\n")
	before := gitT(t, b.dir, "status", "--porcelain")
	indexBefore, err := os.ReadFile(filepath.Join(b.dir, ".git", "index"))
	require.NoError(t, err)

	out, err := DiffWorktree(b.dir, b.first)
	require.NoError(t, err)
	require.Contains(t, string(out), "+world")
	require.Contains(t, string(out), "+++ b/new.txt")

	require.Equal(t, before, gitT(t, b.dir, "status", "--porcelain"), "the agent's status is unchanged")
	indexAfter, err := os.ReadFile(filepath.Join(b.dir, ".git", "index"))
	require.NoError(t, err)
	require.Equal(t, indexBefore, indexAfter, "the worktree's own index is not written")
	require.True(t, strings.Contains(before, "?? new.txt"))
}
