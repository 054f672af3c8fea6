package repo

import (
	"fmt"
	"strings"
)

// Fallback identity for commits the console makes in a repository (or on a
// machine) with no user.name/user.email configured, so an unattended run
// never stops at "Please tell me who you are".
const (
	FallbackAuthorName  = "orchestra-tui"
	FallbackAuthorEmail = "orchestra@localhost"
)

// CommitAll stages everything in the worktree at dir (git add -A, which
// respects .gitignore and info/exclude) and commits it with message. It
// returns HEAD's sha and whether a commit was made: committed is false when
// there was nothing to commit.
//
// Hooks are skipped (--no-verify): this commit records the agent's work as
// it stands; judging it is the verify gate's job, and a hook that prompts
// or fails would stall an unattended run with the work uncommitted.
func CommitAll(dir, message string) (sha string, committed bool, err error) {
	if strings.TrimSpace(message) == "" {
		return "", false, fmt.Errorf("commit in %s: the commit message is empty", dir)
	}
	if _, err := run(dir, "add", "-A"); err != nil {
		return "", false, fmt.Errorf("commit work: %w", err)
	}
	// --quiet makes diff exit 1 when the index differs from HEAD, 0 when
	// not. On an unborn branch there is no HEAD to compare with, and
	// anything staged is a change.
	unborn := false
	if _, err := run(dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		unborn = true
	}
	if !unborn {
		_, err := run(dir, "diff", "--cached", "--quiet", "--no-ext-diff")
		if err == nil {
			head, err := runLine(dir, "rev-parse", "HEAD")
			if err != nil {
				return "", false, fmt.Errorf("commit work: %w", err)
			}
			return head, false, nil
		}
		if exitCode(err) != 1 {
			return "", false, fmt.Errorf("commit work: %w", err)
		}
	} else if out, err := run(dir, "ls-files", "--cached", "-z"); err != nil {
		return "", false, fmt.Errorf("commit work: %w", err)
	} else if len(out) == 0 {
		return "", false, nil
	}

	args := identityArgs(dir)
	args = append(args, "commit", "--quiet", "--no-verify", "-m", message)
	if _, err := run(dir, args...); err != nil {
		return "", false, fmt.Errorf("commit work: %w", err)
	}
	head, err := runLine(dir, "rev-parse", "HEAD")
	if err != nil {
		return "", false, fmt.Errorf("commit work: %w", err)
	}
	return head, true, nil
}

// identityArgs returns -c options supplying the fallback identity for
// whichever of user.name and user.email the user's config lacks; with both
// configured it returns nothing and the user's identity is used.
func identityArgs(dir string) []string {
	var args []string
	if v, err := runLine(dir, "config", "--get", "user.name"); err != nil || v == "" {
		args = append(args, "-c", "user.name="+FallbackAuthorName)
	}
	if v, err := runLine(dir, "config", "--get", "user.email"); err != nil || v == "" {
		args = append(args, "-c", "user.email="+FallbackAuthorEmail)
	}
	return args
}

// Fetch fetches refspec from remote (a remote name or URL) into the
// repository, for resuming a handoff whose commits live elsewhere. It never
// prompts for credentials: without working credentials it fails.
func (r *Repo) Fetch(remote, refspec string) error {
	if err := checkArg("remote", remote); err != nil {
		return fmt.Errorf("fetch in %s: %w", r.Root, err)
	}
	args := []string{"fetch", "--quiet", "--no-tags", "--", remote}
	if refspec != "" {
		if err := checkArg("refspec", strings.TrimPrefix(refspec, "+")); err != nil {
			return fmt.Errorf("fetch in %s: %w", r.Root, err)
		}
		args = append(args, refspec)
	}
	if _, err := run(r.Root, args...); err != nil {
		return fmt.Errorf("fetch %s %s: %w", remote, refspec, err)
	}
	return nil
}
