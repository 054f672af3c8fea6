package repo

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// snapshot hashes every file under dir, .git included, so a test can say
// the repository is byte-identical.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

func mergeSetup(t *testing.T) (*Repo, string) {
	t.Helper()
	dir := initRepo(t, true)
	commitFile(t, dir, "a.txt", "one\n")
	gitT(t, dir, "branch", "orchestra/t1")
	r, err := Open(dir)
	require.NoError(t, err)
	return r, dir
}

func TestMergeFastForwardsWhenTheBaseHasNotMoved(t *testing.T) {
	t.Parallel()
	r, dir := mergeSetup(t)
	gitT(t, dir, "switch", "-q", "orchestra/t1")
	commitFile(t, dir, "a.txt", "two\n")
	tip := gitT(t, dir, "rev-parse", "HEAD")
	gitT(t, dir, "switch", "-q", "main")

	res, err := r.Merge("orchestra/t1", MergeFF, "merge")
	require.NoError(t, err)
	require.True(t, res.FastForward)
	require.Equal(t, "main", res.Into)
	require.Equal(t, 1, res.Commits)
	require.Equal(t, tip, res.Head)
	b, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.Equal(t, "two\n", string(b))

	again, err := r.Merge("orchestra/t1", MergeFF, "merge")
	require.NoError(t, err)
	require.True(t, again.AlreadyMerged)
}

func TestMergeMakesAMergeCommitWhenAsked(t *testing.T) {
	t.Parallel()
	r, dir := mergeSetup(t)
	gitT(t, dir, "switch", "-q", "orchestra/t1")
	commitFile(t, dir, "b.txt", "b\n")
	gitT(t, dir, "switch", "-q", "main")

	res, err := r.Merge("orchestra/t1", MergeNoFF, "Merge task t1")
	require.NoError(t, err)
	require.False(t, res.FastForward)
	require.Equal(t, "Merge task t1", gitT(t, dir, "log", "-1", "--format=%s"))
	require.Equal(t, "1", gitT(t, dir, "rev-list", "--count", "-1", "--min-parents=2", "HEAD"), "HEAD is a merge commit")
	_, err = os.Stat(filepath.Join(dir, "b.txt"))
	require.NoError(t, err)
}

func TestMergeOfDivergedBranchesByMode(t *testing.T) {
	t.Parallel()
	r, dir := mergeSetup(t)
	gitT(t, dir, "switch", "-q", "orchestra/t1")
	commitFile(t, dir, "b.txt", "b\n")
	gitT(t, dir, "switch", "-q", "main")
	commitFile(t, dir, "c.txt", "c\n")

	_, err := r.Merge("orchestra/t1", MergeFFOnly, "m")
	require.ErrorIs(t, err, ErrNotFastForward)

	res, err := r.Merge("orchestra/t1", MergeFF, "Merge task t1")
	require.NoError(t, err)
	require.False(t, res.FastForward)
	for _, f := range []string{"b.txt", "c.txt"} {
		_, err = os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
}

// A conflicting merge is refused before anything changes: the work tree,
// the index, the refs and even the object store are byte-identical.
func TestMergeConflictLeavesTheRepositoryByteIdentical(t *testing.T) {
	t.Parallel()
	r, dir := mergeSetup(t)
	gitT(t, dir, "switch", "-q", "orchestra/t1")
	commitFile(t, dir, "a.txt", "theirs\n")
	gitT(t, dir, "switch", "-q", "main")
	commitFile(t, dir, "a.txt", "ours\n")
	writeFile(t, filepath.Join(dir, "untracked.txt"), "keep me\n")
	before := snapshot(t, dir)

	_, err := r.Merge("orchestra/t1", MergeFF, "m")
	require.ErrorIs(t, err, ErrMergeConflict)
	require.Contains(t, err.Error(), "a.txt")
	require.Contains(t, err.Error(), "nothing was changed")
	require.Equal(t, before, snapshot(t, dir))
}

func TestMergeRefusesADetachedHeadAndAMissingBranch(t *testing.T) {
	t.Parallel()
	r, dir := mergeSetup(t)
	_, err := r.Merge("orchestra/nope", MergeFF, "m")
	require.ErrorContains(t, err, "does not exist")
	gitT(t, dir, "switch", "-q", "--detach")
	_, err = r.Merge("orchestra/t1", MergeFF, "m")
	require.ErrorContains(t, err, "detached HEAD")
}

func TestBranchDeleteRefusesUnmergedWorkUnlessForced(t *testing.T) {
	t.Parallel()
	r, dir := mergeSetup(t)
	gitT(t, dir, "switch", "-q", "orchestra/t1")
	commitFile(t, dir, "b.txt", "b\n")
	gitT(t, dir, "switch", "-q", "main")

	n, err := r.CountAhead("main", "orchestra/t1")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	merged, err := r.IsAncestor("orchestra/t1", "main")
	require.NoError(t, err)
	require.False(t, merged)

	require.Error(t, r.BranchDelete("orchestra/t1", false))
	require.True(t, r.BranchExists("orchestra/t1"))
	require.NoError(t, r.BranchDelete("orchestra/t1", true))
	require.False(t, r.BranchExists("orchestra/t1"))
}

func TestAbbrevKeepsTheLeadingDigits(t *testing.T) {
	t.Parallel()
	require.Equal(t, "0123456789", Abbrev("0123456789abcdef0123456789abcdef01234567"))
	require.Equal(t, "abc", Abbrev("abc"))
}
