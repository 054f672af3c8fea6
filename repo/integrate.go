package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// IntegrateDir is where the merge queue builds its scratch worktrees,
// relative to the repository root: inside .orchestra/, so they never show
// as work in the main checkout.
const IntegrateDir = ".orchestra/integrate"

// IntegrateMode is how the merge queue brings a task's branch onto the
// base: "merge" (fast-forward when it can, as the MergeMode says, else a
// merge commit) or "rebase" (the branch's commits replayed on the base).
type IntegrateMode string

// The integrate modes.
const (
	IntegrateMerge  IntegrateMode = "merge"
	IntegrateRebase IntegrateMode = "rebase"
)

// Integration is a task's branch brought onto the base in a scratch
// worktree, not landed yet: the base branch has not moved.
type Integration struct {
	Base   string // the base branch
	Branch string // the task's branch
	Old    string // the base's head the integration started from
	New    string // the integrated commit; Old when AlreadyMerged
	Tip    string // the task branch's head when the integration started
	Dir    string // the scratch worktree, New checked out; "" when AlreadyMerged
	// FastForward: the branch was already on top of the base; New is its head.
	FastForward bool
	Rebased     bool // New is the branch's commits replayed onto Old
	Commits     int  // commits of the branch the base lacked
	// AlreadyMerged: every commit of the branch is on the base already.
	AlreadyMerged bool
}

// ConflictError is a branch that does not merge (or rebase) cleanly onto the
// base. It wraps ErrMergeConflict and names the files; nothing but the
// scratch worktree, which is removed, was touched.
type ConflictError struct {
	Branch, Base string
	Old          string // the base head it conflicts with
	Files        []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s conflicts with %s (at %s) in %s", e.Branch, e.Base, Abbrev(e.Old), strings.Join(e.Files, ", "))
}

func (e *ConflictError) Unwrap() error { return ErrMergeConflict }

// ErrBaseMoved is returned by Land when the base branch is no longer where
// the integration started: someone else landed meanwhile. Nothing moved.
var ErrBaseMoved = errors.New("the base branch moved since the integration started")

// ErrBaseCheckoutDirty is returned by Land when the main checkout has the
// base branch checked out with uncommitted changes to tracked files:
// moving the branch under them would make them look like a revert of the
// landed work. Nothing moved.
var ErrBaseCheckoutDirty = errors.New("the base branch is checked out with uncommitted changes")

// Integrate brings branch onto base in a fresh scratch worktree named name
// under IntegrateDir and leaves the result checked out there, for the
// caller to run the tests on. The base branch, the main checkout and the
// task's own worktree are not touched. A conflict is a *ConflictError.
// Discard removes the scratch worktree.
func (r *Repo) Integrate(name, branch, base string, mode IntegrateMode, merge MergeMode, message string) (Integration, error) {
	in := Integration{Base: base, Branch: branch}
	if mode != IntegrateMerge && mode != IntegrateRebase {
		return in, fmt.Errorf("integrate mode %q is not merge or rebase", mode)
	}
	if err := checkWorktreeName(name); err != nil {
		return in, fmt.Errorf("integrate %s: %w", branch, err)
	}
	if !r.BranchExists(branch) {
		return in, fmt.Errorf("integrate: branch %s does not exist in %s (pruned, or never created)", branch, r.Root)
	}
	if !r.BranchExists(base) {
		return in, fmt.Errorf("integrate %s: the base branch %s does not exist in %s", branch, base, r.Root)
	}
	var err error
	if in.Old, err = r.BranchHead(base); err != nil {
		return in, fmt.Errorf("integrate %s: %w", branch, err)
	}
	if in.Tip, err = r.BranchHead(branch); err != nil {
		return in, fmt.Errorf("integrate %s: %w", branch, err)
	}
	if in.Commits, err = r.CountAhead(in.Old, in.Tip); err != nil {
		return in, fmt.Errorf("integrate %s: %w", branch, err)
	}
	if in.Commits == 0 {
		in.AlreadyMerged, in.New = true, in.Old
		return in, nil
	}
	ff, err := r.IsAncestor(in.Old, in.Tip)
	if err != nil {
		return in, fmt.Errorf("integrate %s: %w", branch, err)
	}
	if in.Dir, err = r.scratch(name, in.Old); err != nil {
		return in, fmt.Errorf("integrate %s onto %s: %w", branch, base, err)
	}
	fail := func(err error) (Integration, error) {
		_ = r.Discard(in)
		in.Dir = ""
		return in, err
	}
	id := identityArgs(in.Dir)
	switch {
	case ff && merge != MergeNoFF:
		in.FastForward = true
		_, err = run(in.Dir, "checkout", "--quiet", "--detach", in.Tip)
	case mode == IntegrateRebase || merge == MergeFFOnly:
		// ff-only asks for a straight history: the queue gives it one by
		// replaying the branch, never with a merge commit.
		in.Rebased = true
		if _, err = run(in.Dir, "checkout", "--quiet", "--detach", in.Tip); err == nil {
			_, err = run(in.Dir, append(id, "rebase", "--quiet", "--no-autosquash", "--no-verify", in.Old)...)
		}
		if err != nil {
			files := unmerged(in.Dir)
			_, _ = run(in.Dir, "rebase", "--abort")
			if len(files) > 0 {
				return fail(&ConflictError{Branch: branch, Base: base, Old: in.Old, Files: files})
			}
		}
	default:
		_, err = run(in.Dir, append(id, "merge", "--quiet", "--no-edit", "--no-ff", "--no-verify", "-m", message, "--", in.Tip)...)
		if err != nil {
			files := unmerged(in.Dir)
			_, _ = run(in.Dir, "merge", "--abort")
			if len(files) > 0 {
				return fail(&ConflictError{Branch: branch, Base: base, Old: in.Old, Files: files})
			}
		}
	}
	if err != nil {
		return fail(fmt.Errorf("integrate %s onto %s: %w", branch, base, err))
	}
	if in.New, err = runLine(in.Dir, "rev-parse", "HEAD"); err != nil {
		return fail(fmt.Errorf("integrate %s onto %s: %w", branch, base, err))
	}
	return in, nil
}

// unmerged lists the files a stopped merge or rebase left in conflict.
func unmerged(dir string) []string {
	out, err := run(dir, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return nil
	}
	return sortedUnique(splitNUL(out))
}

// scratch creates the scratch worktree name at commit, detached, replacing
// one a crash left behind.
func (r *Repo) scratch(name, commit string) (string, error) {
	path := filepath.Join(r.Root, filepath.FromSlash(IntegrateDir), name)
	if err := r.WorktreeRemove(path); err != nil {
		return "", err
	}
	if err := os.RemoveAll(path); err != nil {
		return "", err
	}
	unlock, err := r.lockWorktrees()
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if _, err := run(r.Root, "worktree", "add", "--quiet", "--detach", "--", path, commit); err != nil {
		return "", err
	}
	return path, nil
}

// Discard removes the integration's scratch worktree.
func (r *Repo) Discard(in Integration) error {
	if in.Dir == "" {
		return nil
	}
	return r.WorktreeRemove(in.Dir)
}

// Landed says what Land did.
type Landed struct {
	// CheckoutMoved: the main checkout was on the base and clean, and was
	// fast-forwarded with it.
	CheckoutMoved bool
	// CheckoutOn is the branch the main checkout is on ("" when detached).
	CheckoutOn string
}

// Land moves the base branch from in.Old to in.New with a compare-and-swap
// (git update-ref BASE NEW OLD): when the base moved meanwhile it returns
// ErrBaseMoved and moves nothing. The main checkout is fast-forwarded with
// it only when it is on the base and clean; on another branch it is never
// touched, and on the base with uncommitted changes Land refuses
// (ErrBaseCheckoutDirty). A rebased integration moves the task's branch to
// the landed commits too, so it reads as merged.
func (r *Repo) Land(in Integration, reason string) (Landed, error) {
	var l Landed
	if in.AlreadyMerged {
		return l, nil
	}
	l.CheckoutOn, _ = r.CurrentBranch()
	onBase := l.CheckoutOn == in.Base
	if onBase {
		// Tracked changes only: an untracked file the landing would
		// overwrite makes the dry run below fail instead.
		out, err := run(r.Root, "status", "--porcelain", "--untracked-files=no")
		if err != nil {
			return l, fmt.Errorf("land %s on %s: %w", in.Branch, in.Base, err)
		}
		if strings.TrimSpace(string(out)) != "" {
			return l, fmt.Errorf("land %s on %s: %w", in.Branch, in.Base, ErrBaseCheckoutDirty)
		}
		if _, err := run(r.Root, "read-tree", "--dry-run", "-m", "-u", in.Old, in.New); err != nil {
			return l, fmt.Errorf("land %s on %s: %w: %v", in.Branch, in.Base, ErrBaseCheckoutDirty, err)
		}
	}
	if _, err := run(r.Root, "update-ref", "-m", reason, "refs/heads/"+in.Base, in.New, in.Old); err != nil {
		if head, herr := r.BranchHead(in.Base); herr == nil && head != in.Old {
			return l, fmt.Errorf("land %s on %s: %w (now at %s, not %s)", in.Branch, in.Base, ErrBaseMoved, Abbrev(head), Abbrev(in.Old))
		}
		return l, fmt.Errorf("land %s on %s: %w", in.Branch, in.Base, err)
	}
	if in.Rebased {
		// Best effort: the base has the work either way.
		_, _ = run(r.Root, "update-ref", "-m", reason, "refs/heads/"+in.Branch, in.New, in.Tip)
	}
	if onBase {
		if _, err := run(r.Root, "read-tree", "-m", "-u", in.Old, in.New); err != nil {
			return l, fmt.Errorf("landed %s on %s, but updating the checkout failed (run git reset --keep HEAD): %w", in.Branch, in.Base, err)
		}
		l.CheckoutMoved = true
	}
	return l, nil
}

// MergeInto merges commit into the branch checked out in the worktree dir.
// A clean merge is committed; a conflicted one is left in progress, its
// markers in the files it returns, for whoever works in dir to resolve
// (the next commit there concludes it).
func MergeInto(dir, commit, message string) ([]string, error) {
	if err := checkArg("commit", commit); err != nil {
		return nil, fmt.Errorf("merge into %s: %w", dir, err)
	}
	args := append(identityArgs(dir), "merge", "--quiet", "--no-edit", "--no-ff", "--no-verify", "-m", message, commit)
	if _, err := run(dir, args...); err != nil {
		if files := unmerged(dir); len(files) > 0 {
			return files, nil
		}
		return nil, fmt.Errorf("merge %s into %s: %w", Abbrev(commit), dir, err)
	}
	return nil, nil
}
