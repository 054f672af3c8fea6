package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestMain keeps every git process (the tests' and the library's) away from
// the machine's global and system config, so a user's hooks, signing or
// default branch cannot change the outcome.
func TestMain(m *testing.M) {
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Exit(m.Run())
}

// gitT runs git in dir for test setup and returns trimmed stdout.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnviron()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// initRepo makes an empty repository on branch main; with user set, it has
// a local identity.
func initRepo(t testing.TB, user bool) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	if user {
		gitT(t, dir, "config", "user.name", "Test User")
		gitT(t, dir, "config", "user.email", "test@example.com")
	}
	return dir
}

// commitFile writes a file and commits it, returning the new HEAD.
func commitFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, name), content)
	gitT(t, dir, "add", "--", name)
	gitT(t, dir, "commit", "-q", "-m", "change "+name)
	return gitT(t, dir, "rev-parse", "HEAD")
}

type bundle struct {
	dir   string // the main checkout
	first string // the first commit
	r     *Repo
}

// setup returns a repository with one commit on main, opened.
func setup(t *testing.T) bundle {
	t.Helper()
	dir := initRepo(t, true)
	first := commitFile(t, dir, "README.md", "hello\n")
	r, err := Open(dir)
	require.NoError(t, err)
	return bundle{dir: dir, first: first, r: r}
}

func TestOpenRefusesNonGitDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Open(dir)
	var ref *task.Refusal
	require.ErrorAs(t, err, &ref)
	require.Equal(t, task.ReasonNotGitRepo, ref.Reason)
	require.Contains(t, ref.Detail, dir)
}

func TestOpenFromSubdirectoryFindsRoot(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := filepath.Join(b.dir, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	r, err := Open(sub)
	require.NoError(t, err)
	require.Equal(t, b.dir, r.Root)
	head, err := r.Head()
	require.NoError(t, err)
	require.Equal(t, b.first, head)
}

func TestIdentityWithoutOrigin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	head := commitFile(t, b.dir, "a.txt", "a\n")
	id, err := b.r.Identity()
	require.NoError(t, err)
	require.Equal(t, Identity{Root: b.first, Head: head}, id)
}

func TestIdentityWithOriginDropsCredentials(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gitT(t, b.dir, "remote", "add", "origin", "https://user:secret@example.com/team/project.git")
	id, err := b.r.Identity()
	require.NoError(t, err)
	require.Equal(t, "https://example.com/team/project.git", id.Origin)
	require.Equal(t, b.first, id.Root)

	gitT(t, b.dir, "remote", "set-url", "origin", "git@example.com:team/project.git")
	id, err = b.r.Identity()
	require.NoError(t, err)
	require.Equal(t, "git@example.com:team/project.git", id.Origin)
}

func TestIdentityRootIsSmallestOfMergedRoots(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gitT(t, b.dir, "checkout", "-q", "--orphan", "other")
	gitT(t, b.dir, "rm", "-q", "-rf", "--", ".")
	other := commitFile(t, b.dir, "other.txt", "other\n")
	gitT(t, b.dir, "checkout", "-q", "main")
	gitT(t, b.dir, "merge", "-q", "--allow-unrelated-histories", "-m", "merge", "other")

	id, err := b.r.Identity()
	require.NoError(t, err)
	require.Equal(t, min(b.first, other), id.Root)
	require.Equal(t, gitT(t, b.dir, "rev-parse", "HEAD"), id.Head)
}

func TestHeadOfEmptyRepositoryFailsWithReason(t *testing.T) {
	t.Parallel()
	dir := initRepo(t, true)
	r, err := Open(dir)
	require.NoError(t, err)
	_, err = r.Head()
	require.ErrorContains(t, err, "no commits yet")
	require.ErrorContains(t, err, dir)
}

func TestHasCommitSeesObjectsFetchedAfterOpen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clone := filepath.Join(t.TempDir(), "clone")
	gitT(t, b.dir, "clone", "-q", b.dir, clone)
	// Keep fetched objects in a pack: a reader that cached the pack list
	// at Open would miss the new commit.
	gitT(t, clone, "config", "fetch.unpackLimit", "1")
	r, err := Open(clone)
	require.NoError(t, err)
	require.True(t, r.HasCommit(b.first))

	next := commitFile(t, b.dir, "a.txt", "a\n")
	require.False(t, r.HasCommit(next))
	require.False(t, r.HasCommit("not-a-sha"))

	require.NoError(t, r.Fetch("origin", "main"))
	require.True(t, r.HasCommit(next))

	err = r.Fetch("--upload-pack=evil", "main")
	require.ErrorContains(t, err, "option")
	err = r.Fetch("origin", "refs/heads/missing")
	require.ErrorContains(t, err, "git fetch")
	require.ErrorContains(t, err, clone)
}

func TestBranchHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gitT(t, b.dir, "branch", "feature")
	sha, err := b.r.BranchHead("feature")
	require.NoError(t, err)
	require.Equal(t, b.first, sha)
	_, err = b.r.BranchHead("nope")
	require.ErrorContains(t, err, "nope")
}

func TestRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Empty(t, b.r.Rules())

	writeFile(t, filepath.Join(b.dir, ".orchestra", "rules.md"), "orchestra rules\n")
	require.Equal(t, "orchestra rules\n", b.r.Rules())
	writeFile(t, filepath.Join(b.dir, "CLAUDE.md"), "claude rules\n")
	require.Equal(t, "claude rules\n", b.r.Rules())
	writeFile(t, filepath.Join(b.dir, "AGENTS.md"), "agents rules\n")
	require.Equal(t, "agents rules\n", b.r.Rules())

	writeFile(t, filepath.Join(b.dir, "AGENTS.md"), strings.Repeat("é", RulesCap))
	got := b.r.Rules()
	require.LessOrEqual(t, len(got), RulesCap)
	require.True(t, strings.HasSuffix(got, rulesTruncated))
	require.True(t, utf8.ValidString(got))
}

func TestOpenRefusesBareRepositoryAndGitDir(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bare := filepath.Join(t.TempDir(), "bare.git")
	gitT(t, b.dir, "clone", "-q", "--bare", b.dir, bare)
	for dir, want := range map[string]string{bare: "bare repository", filepath.Join(b.dir, ".git"): "inside a .git directory"} {
		_, err := Open(dir)
		var ref *task.Refusal
		require.ErrorAs(t, err, &ref, dir)
		require.Equal(t, task.ReasonNotGitRepo, ref.Reason)
		require.Contains(t, ref.Detail, want)
	}
}

func TestIdentityOfShallowCloneIsItsBoundary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	commitFile(t, b.dir, "a.txt", "a\n")
	head := commitFile(t, b.dir, "b.txt", "b\n")
	clone := filepath.Join(t.TempDir(), "clone")
	gitT(t, b.dir, "clone", "-q", "--depth=1", "file://"+b.dir, clone)
	r, err := Open(clone)
	require.NoError(t, err)
	id, err := r.Identity()
	require.NoError(t, err)
	require.Equal(t, head, id.Root, "the shallow boundary counts as the root")
	require.Equal(t, head, id.Head)
	require.Equal(t, "file://"+b.dir, id.Origin)
}
