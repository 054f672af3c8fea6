package repo

import (
	"errors"
	"fmt"
	"strings"
)

// ErrPushStale means a PushLease was refused because the remote branch is
// no longer at the commit the pusher last saw: someone else pushed it
// since (another engine that took the task over).
var ErrPushStale = errors.New("the remote branch moved since it was last seen")

// PushLease pushes branch to remote only if the remote's branch is still at
// expect (absent when expect is ""), with git's --force-with-lease: the
// compare and the update are one step on the remote, so a push from a
// clone whose view is stale never replaces what another pushed since. The
// upstream is set as Push does. It never prompts.
func (r *Repo) PushLease(remote, branch, expect string) error {
	if err := checkArg("remote", remote); err != nil {
		return fmt.Errorf("push in %s: %w", r.Root, err)
	}
	if err := checkArg("branch", branch); err != nil {
		return fmt.Errorf("push in %s: %w", r.Root, err)
	}
	if expect != "" {
		if err := checkArg("commit", expect); err != nil {
			return fmt.Errorf("push in %s: %w", r.Root, err)
		}
	}
	ref := "refs/heads/" + branch
	_, err := run(r.Root, "push", "--quiet", "--set-upstream", "--force-with-lease="+ref+":"+expect, "--", remote, ref+":"+ref)
	if err != nil {
		var ce *commandError
		if errors.As(err, &ce) && (strings.Contains(ce.stderr, "stale info") || strings.Contains(ce.stderr, "[rejected]")) {
			seen := Abbrev(expect)
			if expect == "" {
				seen = "absent"
			}
			return fmt.Errorf("push %s to %s: the remote branch is no longer at %s, where this clone last saw it: %w", branch, remote, seen, ErrPushStale)
		}
		return fmt.Errorf("push %s to %s: %w", branch, remote, err)
	}
	return nil
}

// RemoteTracking returns the commit this clone last fetched of remote's
// branch (refs/remotes/REMOTE/BRANCH), "" when it has none.
func (r *Repo) RemoteTracking(remote, branch string) string {
	if checkArg("remote", remote) != nil || checkArg("branch", branch) != nil {
		return ""
	}
	sha, err := runLine(r.Root, "rev-parse", "--verify", "--quiet", "refs/remotes/"+remote+"/"+branch+"^{commit}")
	if err != nil {
		return ""
	}
	return sha
}
