package repo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVerifiedStateOfTaskWorktree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeFile(t, filepath.Join(b.dir, "b.txt"), "b\n")
	gitT(t, b.dir, "add", "b.txt")
	gitT(t, b.dir, "commit", "-q", "-m", "b")
	base := gitT(t, b.dir, "rev-parse", "HEAD")
	require.NoError(t, b.r.Exclude(".orchestra/"))
	path, err := b.r.WorktreeAdd("t1", "task/t1", "main")
	require.NoError(t, err)

	// One committed change, one dirty tracked file, one untracked file,
	// one staged new file, and a change on main after the branch was cut.
	head := commitFile(t, path, "a.txt", "a\n")
	writeFile(t, filepath.Join(path, "b.txt"), "b changed\n")
	writeFile(t, filepath.Join(path, "new dir", "c file.txt"), "c\n")
	writeFile(t, filepath.Join(path, "e.txt"), "e\n")
	gitT(t, path, "add", "e.txt")
	mainHead := commitFile(t, b.dir, "d.txt", "d\n")

	want := State{
		Branch:  "task/t1",
		Head:    head,
		Base:    mainHead,
		Dirty:   []string{"b.txt", "e.txt", "new dir/c file.txt"},
		Ahead:   1,
		Behind:  1,
		Changed: []string{"a.txt", "b.txt", "e.txt", "new dir/c file.txt"},
	}
	st, err := VerifiedState(path, "main")
	require.NoError(t, err)
	require.Equal(t, want, st)

	// From a subdirectory the answer is the same.
	st, err = VerifiedState(filepath.Join(path, "new dir"), "main")
	require.NoError(t, err)
	require.Equal(t, want, st)

	changed, err := Changed(path, base)
	require.NoError(t, err)
	require.Equal(t, want.Changed, changed)
}

func TestVerifiedStateDeletedFileAndDetachedHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	commitFile(t, b.dir, "gone.txt", "x\n")
	gitT(t, b.dir, "checkout", "-q", "--detach")
	require.NoError(t, os.Remove(filepath.Join(b.dir, "gone.txt")))
	st, err := VerifiedState(b.dir, b.first)
	require.NoError(t, err)
	require.Empty(t, st.Branch)
	require.Equal(t, []string{"gone.txt"}, st.Dirty)
	require.Empty(t, st.Changed, "created and deleted since base: no net change")
	require.Equal(t, 1, st.Ahead)
}

func TestVerifiedStateErrorsNameDirAndCommand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := VerifiedState(b.dir, "no-such-branch")
	require.ErrorContains(t, err, "no-such-branch")
	require.ErrorContains(t, err, b.dir)
	_, err = VerifiedState(b.dir, "--output=x")
	require.ErrorContains(t, err, "option")

	dir := t.TempDir()
	_, err = VerifiedState(dir, "main")
	require.ErrorContains(t, err, "git status")
	require.ErrorContains(t, err, dir)
	require.ErrorContains(t, err, "not a git repository")
}

func TestVerifiedStateOfUnbornBranch(t *testing.T) {
	t.Parallel()
	dir := initRepo(t, true)
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
	st, err := VerifiedState(dir, "")
	require.NoError(t, err)
	require.Equal(t, State{Branch: "main", Dirty: []string{"a.txt"}, Changed: []string{"a.txt"}}, st)
}

func TestParseStatusEntries(t *testing.T) {
	t.Parallel()
	out := "# branch.oid 1111111111111111111111111111111111111111\x00" +
		"# branch.head feature\x00" +
		"# branch.upstream origin/feature\x00" +
		"1 .M N... 100644 100644 100644 aaaa bbbb with space.txt\x00" +
		"2 R. N... 100644 100644 100644 aaaa bbbb R100 new.txt\x00old.txt\x00" +
		"u UU N... 100644 100644 100644 100644 aaaa bbbb cccc conflict.txt\x00" +
		"? untracked.txt\x00" +
		"! ignored.txt\x00"
	st, err := parseStatus([]byte(out))
	require.NoError(t, err)
	require.Equal(t, status{
		branch:    "feature",
		head:      "1111111111111111111111111111111111111111",
		dirty:     []string{"conflict.txt", "new.txt", "old.txt", "untracked.txt", "with space.txt"},
		untracked: []string{"untracked.txt"},
	}, st)

	_, err = parseStatus([]byte("1 .M short\x00"))
	require.ErrorContains(t, err, "malformed")
}
