package repo

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// diffArgs is how every patch the console shows is asked of git: no colour,
// no external diff driver or textconv a user configured (the console parses
// the output), renames found, three lines of context, and a/ b/ prefixes
// whatever diff.noprefix says.
var diffArgs = []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "--unified=3", "--src-prefix=a/", "--dst-prefix=b/"}

// MergeBase returns the best common ancestor of revisions a and b.
func (r *Repo) MergeBase(a, b string) (string, error) {
	if err := checkArg("revision", a); err != nil {
		return "", err
	}
	if err := checkArg("revision", b); err != nil {
		return "", err
	}
	sha, err := runLine(r.Root, "merge-base", a, b)
	if err != nil {
		return "", fmt.Errorf("find where %s and %s part: %w", b, a, err)
	}
	return sha, nil
}

// CommitBefore returns the newest commit reachable from rev that was
// committed at or before t, or "" when there is none. It finds where a
// branch stood when a session started.
func (r *Repo) CommitBefore(rev string, t time.Time) (string, error) {
	if err := checkArg("revision", rev); err != nil {
		return "", err
	}
	return runLine(r.Root, "rev-list", "-1", "--before="+t.UTC().Format(time.RFC3339), rev, "--")
}

// Diff returns git's patch from commit from to commit to.
func (r *Repo) Diff(from, to string) ([]byte, error) {
	if err := checkArg("revision", from); err != nil {
		return nil, err
	}
	if err := checkArg("revision", to); err != nil {
		return nil, err
	}
	out, err := run(r.Root, append(diffArgs, from, to, "--")...)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", Abbrev(from), Abbrev(to), err)
	}
	return out, nil
}

// DiffWorktree returns git's patch from commit from to the files in the
// worktree dir as they are now, untracked files included. It stages into a
// scratch index, never the worktree's own, so the agent working there sees
// no change to its index and takes no lock.
func DiffWorktree(dir, from string) ([]byte, error) {
	if err := checkArg("revision", from); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "orchestra-diff-")
	if err != nil {
		return nil, fmt.Errorf("diff the worktree %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	index := "GIT_INDEX_FILE=" + filepath.Join(tmp, "index")
	if _, err := runEnv(dir, []string{index}, "read-tree", from); err != nil {
		return nil, fmt.Errorf("diff the worktree %s: %w", dir, err)
	}
	if _, err := runEnv(dir, []string{index}, "add", "--all", "--", "."); err != nil {
		return nil, fmt.Errorf("diff the worktree %s: %w", dir, err)
	}
	out, err := runEnv(dir, []string{index}, append(diffArgs, "--cached", from, "--")...)
	if err != nil {
		return nil, fmt.Errorf("diff the worktree %s against %s: %w", dir, Abbrev(from), err)
	}
	return out, nil
}

// runEnv is run with extra environment variables after gitEnviron's (which
// drops the repository-scoped ones a caller may mean to set, such as
// GIT_INDEX_FILE).
func runEnv(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnviron(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > stderrCap {
			msg = msg[:stderrCap] + "…"
		}
		return stdout.Bytes(), &commandError{dir: dir, args: args, stderr: msg, err: err}
	}
	return stdout.Bytes(), nil
}
