package handoff

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// MissingCommitError says a commit the handoff builds on is not in this
// checkout, and which fetch brings it.
type MissingCommitError struct {
	What   string // "base commit" or "branch head"
	Commit string // full commit id
	Fetch  string // the git command that brings it, ready to run
}

// Error names the commit and the fetch that brings it.
func (e *MissingCommitError) Error() string {
	return fmt.Sprintf("%s %s… is not in this checkout; fetch it first: %s", e.What, short(e.Commit), e.Fetch)
}

// Check decides whether a parsed handoff can resume in the local repository
// whose identity is local. A handoff from another repository (a different
// root commit) is a *task.Refusal with reason task.ReasonHandoffForeignRepo
// naming both. A base commit or branch head that hasCommit does not find is
// a *MissingCommitError carrying the fetch to run.
func Check(d Document, local Identity, hasCommit func(sha string) bool) error {
	if local.RootCommit == "" || local.RootCommit != d.Repo.RootCommit {
		return task.Refuse(task.ReasonHandoffForeignRepo,
			"The handoff comes from %s; this checkout is %s.", describe(d.Repo), describe(local))
	}
	if hasCommit == nil {
		return errors.New("handoff: check needs a way to look up commits in this checkout")
	}
	if !hasCommit(d.Repo.BaseCommit) {
		return &MissingCommitError{What: "base commit", Commit: d.Repo.BaseCommit, Fetch: fetchCommand(d.Repo, d.Repo.BaseCommit)}
	}
	// Without the branch head the resumed task would start from the base
	// and silently lose the work already done on the branch.
	if h := d.Repo.BranchHead; h != "" && h != d.Repo.BaseCommit && !hasCommit(h) {
		return &MissingCommitError{What: "branch head", Commit: h, Fetch: fetchCommand(d.Repo, h)}
	}
	return nil
}

// describe renders an identity for an operator comparing two of them.
func describe(id Identity) string {
	origin := id.Origin
	if origin == "" {
		origin = "a repository with no origin remote"
	}
	root := id.RootCommit
	if root == "" {
		root = "none: no commits"
	}
	return fmt.Sprintf("%s (root commit %s)", origin, root)
}

// fetchCommand is the git command that brings commit into this checkout:
// the branch from the exporter's origin when both are known, with
// placeholders the operator fills in otherwise.
func fetchCommand(id Identity, commit string) string {
	remote := "<remote>"
	if id.Origin != "" {
		remote = shellQuote(id.Origin)
	}
	ref := commit
	if id.Branch != "" {
		ref = shellQuote(id.Branch)
	}
	return "git fetch " + remote + " " + ref
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// shellQuote single-quotes s unless it is made only of characters a shell
// leaves alone, so a suggested command can be pasted as it is.
func shellQuote(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)
	}
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !safe(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
