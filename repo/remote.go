package repo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrForeignBranch means a branch fetched from a remote does not share this
// repository's root commit: it is another repository's work.
var ErrForeignBranch = errors.New("the branch belongs to another repository")

// FetchBranch fetches branch from remote into its remote-tracking ref
// (refs/remotes/<remote>/<branch>) and returns the commit it points at, or
// "" when the remote has no such branch (the task never pushed). The
// fetched history must start at this repository's root commit, as a handoff
// must (Identity), or ErrForeignBranch is returned, naming both roots. It
// never prompts for credentials.
func (r *Repo) FetchBranch(remote, branch string) (string, error) {
	if err := checkArg("remote", remote); err != nil {
		return "", fmt.Errorf("fetch in %s: %w", r.Root, err)
	}
	if err := checkArg("branch", branch); err != nil {
		return "", fmt.Errorf("fetch in %s: %w", r.Root, err)
	}
	tracking := "refs/remotes/" + remote + "/" + branch
	_, err := run(r.Root, "fetch", "--quiet", "--no-tags", "--", remote, "+refs/heads/"+branch+":"+tracking)
	if err != nil {
		var ce *commandError
		if errors.As(err, &ce) && strings.Contains(ce.stderr, "couldn't find remote ref") {
			return "", nil
		}
		return "", fmt.Errorf("fetch %s from %s: %w", branch, remote, err)
	}
	sha, err := runLine(r.Root, "rev-parse", "--verify", "--quiet", tracking+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("fetch %s from %s: read %s: %w", branch, remote, tracking, err)
	}
	theirs, err := rootOf(r.Root, sha)
	if err != nil {
		return "", fmt.Errorf("fetch %s from %s: %w", branch, remote, err)
	}
	head, err := r.Head()
	if err != nil {
		return "", err
	}
	ours, err := rootOf(r.Root, head)
	if err != nil {
		return "", err
	}
	if theirs != ours {
		return "", fmt.Errorf("%s on %s starts at root commit %s, this clone at %s: %w",
			branch, remote, Abbrev(theirs), Abbrev(ours), ErrForeignBranch)
	}
	return sha, nil
}

// FastForward moves the branch checked out in the worktree dir forward to
// commit when it is an ancestor of commit, and reports whether it moved. A
// branch that is already there, ahead, or diverged is left alone.
func FastForward(dir, commit string) (bool, error) {
	head, err := runLine(dir, "rev-parse", "HEAD")
	if err != nil {
		return false, fmt.Errorf("fast-forward in %s: %w", dir, err)
	}
	if head == commit {
		return false, nil
	}
	if _, err := run(dir, "merge-base", "--is-ancestor", head, commit); err != nil {
		return false, nil // ahead or diverged: this clone's work stays
	}
	if _, err := run(dir, "merge", "--ff-only", "--quiet", commit); err != nil {
		return false, fmt.Errorf("fast-forward %s to %s: %w", dir, Abbrev(commit), err)
	}
	return true, nil
}

// rootOf returns the smallest root commit reachable from commit, the way
// Identity picks one.
func rootOf(dir, commit string) (string, error) {
	out, err := runLine(dir, "rev-list", "--max-parents=0", commit)
	if err != nil {
		return "", fmt.Errorf("find the root commit of %s: %w", Abbrev(commit), err)
	}
	roots := strings.Fields(out)
	if len(roots) == 0 {
		return "", fmt.Errorf("commit %s has no root commit", Abbrev(commit))
	}
	return slices.Min(roots), nil
}
