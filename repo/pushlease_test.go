package repo

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two clones push one branch: the first to push under the lease it saw
// wins; the other's push, made from a stale view, is refused with
// ErrPushStale and the remote's tip stays the winner's commit.
func TestPushLeaseRefusesAStaleView(t *testing.T) {
	t.Parallel()
	a := setup(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitT(t, a.dir, "init", "-q", "--bare", remote)
	gitT(t, a.dir, "remote", "add", "origin", remote)
	gitT(t, a.dir, "push", "-q", "origin", "main")

	gitT(t, a.dir, "checkout", "-q", "-b", "task")
	c1 := commitFile(t, a.dir, "one.txt", "1\n")
	require.NoError(t, a.r.PushLease("origin", "task", ""), "the branch is absent, as expected")
	commitFile(t, a.dir, "one-more.txt", "1\n")
	require.ErrorIs(t, a.r.PushLease("origin", "task", ""), ErrPushStale, "it exists now")
	gitT(t, a.dir, "reset", "-q", "--hard", c1)

	// Another clone (the engine that took over) fetches c1 and pushes c2.
	bdir := filepath.Join(t.TempDir(), "b")
	gitT(t, a.dir, "clone", "-q", remote, bdir)
	gitT(t, bdir, "config", "user.name", "B")
	gitT(t, bdir, "config", "user.email", "b@example.com")
	gitT(t, bdir, "checkout", "-q", "task")
	c2 := commitFile(t, bdir, "two.txt", "2\n")
	b, err := Open(bdir)
	require.NoError(t, err)
	require.NoError(t, b.PushLease("origin", "task", c1))

	// The first clone, still seeing c1, commits again and pushes.
	commitFile(t, a.dir, "late.txt", "late\n")
	err = a.r.PushLease("origin", "task", c1)
	require.ErrorIs(t, err, ErrPushStale)
	require.Contains(t, err.Error(), Abbrev(c1))
	require.Equal(t, c2, gitT(t, a.dir, "--git-dir", remote, "rev-parse", "refs/heads/task"), "the stale push replaced the tip")

	_, err = b.FetchBranch("origin", "task")
	require.NoError(t, err)
	require.Equal(t, c2, b.RemoteTracking("origin", "task"))
	require.Empty(t, b.RemoteTracking("origin", "nope"))
}
