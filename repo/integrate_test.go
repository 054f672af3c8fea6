package repo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// integrateSetup is a repository on main with a.txt, and a task branch
// orchestra/t1 that changed it.
func integrateSetup(t *testing.T) (*Repo, string) {
	t.Helper()
	r, dir := mergeSetup(t)
	gitT(t, dir, "switch", "-q", "orchestra/t1")
	commitFile(t, dir, "b.txt", "task\n")
	gitT(t, dir, "switch", "-q", "main")
	return r, dir
}

func TestIntegrateFastForwardLandsWithCompareAndSwapAndMovesACleanCheckout(t *testing.T) {
	t.Parallel()
	r, dir := integrateSetup(t)
	in, err := r.Integrate("t1", "orchestra/t1", "main", IntegrateMerge, MergeFF, "merge t1")
	require.NoError(t, err)
	require.True(t, in.FastForward)
	require.FileExists(t, filepath.Join(in.Dir, "b.txt"), "the scratch worktree holds the integrated tree")
	require.NoFileExists(t, filepath.Join(dir, "b.txt"), "nothing lands before Land")

	l, err := r.Land(in, "orchestra-tui: land t1")
	require.NoError(t, err)
	require.True(t, l.CheckoutMoved)
	require.Equal(t, in.New, gitT(t, dir, "rev-parse", "main"))
	require.FileExists(t, filepath.Join(dir, "b.txt"), "the clean checkout on the base is fast-forwarded")
	require.Empty(t, gitT(t, dir, "status", "--porcelain", "--untracked-files=no"))
	require.NoError(t, r.Discard(in))
	require.NoDirExists(t, in.Dir)
}

func TestIntegrateConflictNamesTheFilesAndMovesNothing(t *testing.T) {
	t.Parallel()
	r, dir := mergeSetup(t)
	gitT(t, dir, "switch", "-q", "orchestra/t1")
	commitFile(t, dir, "a.txt", "task\n")
	gitT(t, dir, "switch", "-q", "main")
	commitFile(t, dir, "a.txt", "main\n")
	head := gitT(t, dir, "rev-parse", "main")
	for _, mode := range []IntegrateMode{IntegrateMerge, IntegrateRebase} {
		_, err := r.Integrate("t1", "orchestra/t1", "main", mode, MergeFF, "merge t1")
		var ce *ConflictError
		require.ErrorAs(t, err, &ce, mode)
		require.ErrorIs(t, err, ErrMergeConflict)
		require.Equal(t, []string{"a.txt"}, ce.Files)
		require.Equal(t, head, gitT(t, dir, "rev-parse", "main"))
		require.NoDirExists(t, filepath.Join(dir, IntegrateDir, "t1"), "the scratch worktree is removed")
	}
}

func TestLandRefusesWhenTheBaseMovedMeanwhile(t *testing.T) {
	t.Parallel()
	r, dir := integrateSetup(t)
	in, err := r.Integrate("t1", "orchestra/t1", "main", IntegrateMerge, MergeNoFF, "merge t1")
	require.NoError(t, err)
	require.False(t, in.FastForward)
	moved := commitFile(t, dir, "c.txt", "someone else\n")
	_, err = r.Land(in, "land")
	require.ErrorIs(t, err, ErrBaseMoved)
	require.Equal(t, moved, gitT(t, dir, "rev-parse", "main"), "the compare-and-swap left the base where the other writer put it")
	require.NoError(t, r.Discard(in))
}

func TestLandNeverTouchesADirtyCheckout(t *testing.T) {
	t.Parallel()
	r, dir := integrateSetup(t)
	in, err := r.Integrate("t1", "orchestra/t1", "main", IntegrateRebase, MergeFF, "merge t1")
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "a.txt"), "operator's edit\n")
	before := snapshot(t, dir)
	_, err = r.Land(in, "land")
	require.ErrorIs(t, err, ErrBaseCheckoutDirty, "on the base with changes: refused")
	require.Equal(t, before, snapshot(t, dir), "byte-identical")

	// On another branch, dirty: the base moves, the checkout stays as it is.
	gitT(t, dir, "switch", "-q", "-c", "wip")
	before = snapshot(t, dir)
	l, err := r.Land(in, "land")
	require.NoError(t, err)
	require.False(t, l.CheckoutMoved)
	require.Equal(t, "wip", l.CheckoutOn)
	require.Equal(t, in.New, gitT(t, dir, "rev-parse", "main"))
	after := snapshot(t, dir)
	// Only git's own ref and log of main changed; every file of the checkout is as it was.
	for p, sum := range before {
		if !isGitInternal(p) {
			require.Equal(t, sum, after[p], p)
		}
	}
	require.NoError(t, r.Discard(in))
}

func isGitInternal(p string) bool { return p == ".git/" || strings.HasPrefix(p, ".git/") }
