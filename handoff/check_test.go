package handoff

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

type checkBundle struct {
	doc     Document
	local   Identity
	commits map[string]bool
}

func (b checkBundle) has(sha string) bool { return b.commits[sha] }

func setupCheck(t *testing.T) checkBundle {
	t.Helper()
	d, err := Parse(mustMarshal(t, fullDocument()))
	require.NoError(t, err)
	return checkBundle{
		doc:     d,
		local:   Identity{Origin: "git@example.com:ana/calc.git", RootCommit: rootSHA},
		commits: map[string]bool{rootSHA: true, baseSHA: true, headSHA: true},
	}
}

func mustMarshal(t *testing.T, d Document) []byte {
	t.Helper()
	data, err := Marshal(d)
	require.NoError(t, err)
	return data
}

func TestCheckAcceptsTheSameRepository(t *testing.T) {
	t.Parallel()
	b := setupCheck(t)
	require.NoError(t, Check(b.doc, b.local, b.has))
}

func TestCheckRefusesAForeignRepository(t *testing.T) {
	t.Parallel()
	b := setupCheck(t)
	other := "9999999999999999999999999999999999999999"
	b.local.RootCommit = other

	err := Check(b.doc, b.local, b.has)
	var r *task.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, task.ReasonHandoffForeignRepo, r.Reason)
	require.Contains(t, r.Detail, "https://example.com/acme/calc.git (root commit "+rootSHA+")")
	require.Contains(t, r.Detail, "git@example.com:ana/calc.git (root commit "+other+")")

	b.local = Identity{}
	err = Check(b.doc, b.local, b.has)
	require.ErrorAs(t, err, &r)
	require.Contains(t, r.Detail, "no origin remote (root commit none: no commits)")
}

func TestCheckExplainsAMissingBaseCommit(t *testing.T) {
	t.Parallel()
	b := setupCheck(t)
	delete(b.commits, baseSHA)

	err := Check(b.doc, b.local, b.has)
	var mc *MissingCommitError
	require.ErrorAs(t, err, &mc)
	require.Equal(t, baseSHA, mc.Commit)
	require.Equal(t, "git fetch https://example.com/acme/calc.git orchestra/fix-add", mc.Fetch)
	require.EqualError(t, err, "base commit 222222222222… is not in this checkout; fetch it first: git fetch https://example.com/acme/calc.git orchestra/fix-add")
}

func TestCheckWithoutOriginNamesARemotePlaceholder(t *testing.T) {
	t.Parallel()
	b := setupCheck(t)
	b.doc.Repo.Origin = ""
	b.doc.Repo.Branch = ""
	delete(b.commits, baseSHA)

	err := Check(b.doc, b.local, b.has)
	require.ErrorContains(t, err, "fetch it first: git fetch <remote> "+baseSHA)
}

func TestCheckNeedsTheBranchHead(t *testing.T) {
	t.Parallel()
	b := setupCheck(t)
	delete(b.commits, headSHA)

	err := Check(b.doc, b.local, b.has)
	var mc *MissingCommitError
	require.ErrorAs(t, err, &mc)
	require.Equal(t, "branch head", mc.What)
	require.Equal(t, headSHA, mc.Commit)
}

func TestFetchCommandQuotesWhatAShellWouldSplit(t *testing.T) {
	t.Parallel()
	got := fetchCommand(Identity{Origin: "https://example.com/a&b.git", Branch: "orchestra/it's"}, baseSHA)
	require.Equal(t, `git fetch 'https://example.com/a&b.git' 'orchestra/it'\''s'`, got)
}
