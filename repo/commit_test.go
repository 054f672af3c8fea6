package repo

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCommitAllCommitsOnceThenReportsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.r.Exclude(".orchestra/"))
	path, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)
	writeFile(t, filepath.Join(path, "a.txt"), "a\n")
	writeFile(t, filepath.Join(path, ".orchestra", "done"), "")

	sha, committed, err := CommitAll(path, "task t1: implement")
	require.NoError(t, err)
	require.True(t, committed)
	require.Equal(t, gitT(t, path, "rev-parse", "HEAD"), sha)
	require.Equal(t, "a.txt", gitT(t, path, "show", "--name-only", "--format=", sha), "excluded state is not committed")
	require.Equal(t, "Test User <test@example.com>", gitT(t, path, "log", "-1", "--format=%an <%ae>"))

	again, committed, err := CommitAll(path, "task t1: implement")
	require.NoError(t, err)
	require.False(t, committed)
	require.Equal(t, sha, again)
}

func TestCommitAllUsesFallbackIdentityWhenNoneConfigured(t *testing.T) {
	t.Parallel()
	dir := initRepo(t, false)
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
	sha, committed, err := CommitAll(dir, "first")
	require.NoError(t, err)
	require.True(t, committed)
	require.Equal(t, "orchestra-tui <orchestra@localhost> / orchestra-tui <orchestra@localhost>",
		gitT(t, dir, "log", "-1", "--format=%an <%ae> / %cn <%ce>", sha))

	_, committed, err = CommitAll(dir, "second")
	require.NoError(t, err)
	require.False(t, committed)
}

func TestCommitAllOnEmptyUnbornBranch(t *testing.T) {
	t.Parallel()
	dir := initRepo(t, true)
	sha, committed, err := CommitAll(dir, "nothing")
	require.NoError(t, err)
	require.False(t, committed)
	require.Empty(t, sha)
}
