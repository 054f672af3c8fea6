package repo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ShortSHA is how many hex digits of a commit's hash the console shows: the
// leading ones, as git abbreviates, so `git show` finds what the operator
// copies.
const ShortSHA = 10

// Abbrev returns the leading ShortSHA digits of a commit hash; anything
// shorter is returned as is.
func Abbrev(sha string) string {
	if len(sha) > ShortSHA {
		return sha[:ShortSHA]
	}
	return sha
}

// CurrentBranch returns the short name of the branch checked out in the
// main checkout. A detached HEAD is an error that says so: there is no
// branch to merge into.
func (r *Repo) CurrentBranch() (string, error) {
	name, err := runLine(r.Root, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil || name == "" {
		return "", fmt.Errorf("%s has a detached HEAD: check out the branch the work should go to (git switch main)", r.Root)
	}
	return name, nil
}

// BranchExists reports whether the local branch exists.
func (r *Repo) BranchExists(branch string) bool {
	if checkArg("branch", branch) != nil {
		return false
	}
	_, err := run(r.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// CountAhead returns how many commits branch has that base lacks (git
// rev-list --count base..branch).
func (r *Repo) CountAhead(base, branch string) (int, error) {
	if err := checkArg("base", base); err != nil {
		return 0, err
	}
	if err := checkArg("branch", branch); err != nil {
		return 0, err
	}
	out, err := runLine(r.Root, "rev-list", "--count", base+".."+branch, "--")
	if err != nil {
		return 0, fmt.Errorf("count commits of %s not on %s: %w", branch, base, err)
	}
	return strconv.Atoi(out)
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(a, b string) (bool, error) {
	if err := checkArg("revision", a); err != nil {
		return false, err
	}
	if err := checkArg("revision", b); err != nil {
		return false, err
	}
	_, err := run(r.Root, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, fmt.Errorf("compare %s with %s: %w", a, b, err)
}

// BranchDelete deletes a local branch. Without force git refuses one whose
// commits are not merged into HEAD or its upstream.
func (r *Repo) BranchDelete(branch string, force bool) error {
	if err := checkArg("branch", branch); err != nil {
		return fmt.Errorf("delete branch in %s: %w", r.Root, err)
	}
	flag := "-d"
	if force {
		flag = "-D"
	}
	if _, err := run(r.Root, "branch", "--quiet", flag, "--", branch); err != nil {
		return fmt.Errorf("delete branch %s: %w", branch, err)
	}
	return nil
}

// MergeMode says how a task's branch goes into the base branch, in git's
// words: "ff" fast-forwards when it can and otherwise makes a merge commit,
// "ff-only" refuses what it cannot fast-forward, "no-ff" always makes a
// merge commit.
type MergeMode string

// The merge modes.
const (
	MergeFF     MergeMode = "ff"
	MergeFFOnly MergeMode = "ff-only"
	MergeNoFF   MergeMode = "no-ff"
)

// Valid reports whether m is a known mode.
func (m MergeMode) Valid() bool { return m == MergeFF || m == MergeFFOnly || m == MergeNoFF }

// MergeResult says what Merge did.
type MergeResult struct {
	Into          string // the branch merged into
	Head          string // its new head
	Commits       int    // commits the merge brought in
	FastForward   bool   // moved the branch; no merge commit
	AlreadyMerged bool   // nothing to do: every commit was already there
}

// ErrMergeConflict is returned (wrapped, naming the files) when the branch
// cannot merge cleanly. The repository is left exactly as it was.
var ErrMergeConflict = errors.New("merge conflict")

// ErrNotFastForward is returned in ff-only mode when the base branch has
// moved on since the task branched.
var ErrNotFastForward = errors.New("not a fast-forward")

// Merge merges branch into the branch checked out in the main checkout.
//
// A conflict is found before anything is touched: git merge-tree computes
// the merge with its new objects written to a scratch object directory, so
// a refused merge leaves the repository byte-identical (index, work tree,
// refs and object store). Only a clean merge is then made for real.
func (r *Repo) Merge(branch string, mode MergeMode, message string) (MergeResult, error) {
	if !mode.Valid() {
		return MergeResult{}, fmt.Errorf("merge mode %q is not one of ff, ff-only, no-ff", mode)
	}
	if !r.BranchExists(branch) {
		return MergeResult{}, fmt.Errorf("merge: branch %s does not exist in %s (pruned, or never created)", branch, r.Root)
	}
	into, err := r.CurrentBranch()
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", branch, err)
	}
	res := MergeResult{Into: into}
	if res.Commits, err = r.CountAhead("HEAD", branch); err != nil {
		return res, fmt.Errorf("merge %s: %w", branch, err)
	}
	if res.Commits == 0 {
		res.AlreadyMerged = true
		res.Head, err = runLine(r.Root, "rev-parse", "HEAD")
		return res, err
	}
	ff, err := r.IsAncestor("HEAD", branch)
	if err != nil {
		return res, fmt.Errorf("merge %s: %w", branch, err)
	}
	if !ff && mode == MergeFFOnly {
		return res, fmt.Errorf("merge %s into %s: %w: %s has moved on since the task branched and merge mode ff-only refuses a merge commit (set [finalise] merge = \"ff\", or rebase the branch)",
			branch, into, ErrNotFastForward, into)
	}
	if !ff {
		if files, err := r.conflicts(branch); err != nil {
			return res, fmt.Errorf("merge %s: %w", branch, err)
		} else if len(files) > 0 {
			return res, fmt.Errorf("merge %s into %s: %w in %s; nothing was changed: resolve it by hand (git merge %s) or retry the task on the new %s",
				branch, into, ErrMergeConflict, strings.Join(files, ", "), branch, into)
		}
	}
	args := identityArgs(r.Root)
	args = append(args, "merge", "--quiet", "--no-edit")
	switch {
	case ff && mode != MergeNoFF:
		args = append(args, "--ff-only")
		res.FastForward = true
	default:
		args = append(args, "--no-ff", "-m", message)
	}
	args = append(args, "--", branch)
	if _, err := run(r.Root, args...); err != nil {
		// The checks above passed, so this is local changes in the
		// main checkout that the merge would overwrite (git then changes
		// nothing) or something unexpected: make sure no half merge stays.
		if _, statErr := os.Stat(filepath.Join(r.gitDir(), "MERGE_HEAD")); statErr == nil {
			_, _ = run(r.Root, "merge", "--abort")
		}
		return res, fmt.Errorf("merge %s into %s: %w", branch, into, err)
	}
	res.Head, err = runLine(r.Root, "rev-parse", "HEAD")
	return res, err
}

// gitDir returns the main checkout's git directory.
func (r *Repo) gitDir() string {
	dir, err := runLine(r.Root, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return filepath.Join(r.Root, ".git")
	}
	return dir
}

// conflicts returns the files merging branch into HEAD would conflict in,
// computed without touching the repository: git merge-tree writes the trees
// it builds to a scratch object directory that borrows the real one as an
// alternate, and the scratch directory is removed afterwards.
func (r *Repo) conflicts(branch string) ([]string, error) {
	objects, err := runLine(r.Root, "rev-parse", "--git-path", "objects")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(objects) {
		objects = filepath.Join(r.Root, objects)
	}
	scratch, err := os.MkdirTemp("", "orchestra-merge-check-")
	if err != nil {
		return nil, fmt.Errorf("check for conflicts: %w", err)
	}
	defer os.RemoveAll(scratch)
	cmd := exec.Command("git", "merge-tree", "--write-tree", "--name-only", "--no-messages", "HEAD", branch)
	cmd.Dir = r.Root
	cmd.Env = append(gitEnviron(), "GIT_OBJECT_DIRECTORY="+scratch, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+objects)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err == nil {
		return nil, nil
	}
	if exitCode(err) == 1 {
		// The first line is the tree; the conflicted files follow.
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		var files []string
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); l != "" && !contains(files, l) {
				files = append(files, l)
			}
		}
		if len(files) == 0 {
			files = []string{"(git named no file)"}
		}
		return files, nil
	}
	return nil, fmt.Errorf("check for conflicts with git merge-tree (needs git 2.38 or later): %v: %s", err, strings.TrimSpace(stderr.String()))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Push pushes branch to remote, setting its upstream. It never prompts:
// without working credentials it fails with git's message.
func (r *Repo) Push(remote, branch string) error {
	if err := checkArg("remote", remote); err != nil {
		return fmt.Errorf("push in %s: %w", r.Root, err)
	}
	if err := checkArg("branch", branch); err != nil {
		return fmt.Errorf("push in %s: %w", r.Root, err)
	}
	if _, err := run(r.Root, "push", "--quiet", "--set-upstream", "--", remote, "refs/heads/"+branch+":refs/heads/"+branch); err != nil {
		return fmt.Errorf("push %s to %s: %w", branch, remote, err)
	}
	return nil
}
