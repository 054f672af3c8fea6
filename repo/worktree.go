package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// WorktreesDir is where task worktrees live, relative to the repository
// root. It is inside .orchestra/ (excluded from status) and never under a
// temporary directory, so a worktree survives a crash and a reboot and the
// relaunched task finds its work where it left it.
const WorktreesDir = ".orchestra/worktrees"

// WorktreeAdd creates the linked worktree <Root>/.orchestra/worktrees/<name>
// with branch checked out, creating the branch at base when it does not
// exist yet. If that worktree already exists on that branch it is returned
// as is, so a relaunch after a crash picks up where the last one stopped.
func (r *Repo) WorktreeAdd(name, branch, base string) (string, error) {
	if err := checkWorktreeName(name); err != nil {
		return "", fmt.Errorf("add worktree in %s: %w", r.Root, err)
	}
	if err := checkArg("branch", branch); err != nil {
		return "", fmt.Errorf("add worktree %s in %s: %w", name, r.Root, err)
	}
	if _, err := run(r.Root, "check-ref-format", "--branch", branch); err != nil {
		return "", fmt.Errorf("add worktree %s: %q is not a valid branch name: %w", name, branch, err)
	}
	path := filepath.Join(r.Root, filepath.FromSlash(WorktreesDir), name)

	unlock, err := r.lockWorktrees()
	if err != nil {
		return "", fmt.Errorf("add worktree %s: %w", name, err)
	}
	defer unlock()
	wts, err := r.worktrees()
	if err != nil {
		return "", fmt.Errorf("add worktree %s: %w", name, err)
	}
	if wt, ok := findWorktree(wts, path); ok {
		if wt.prunable {
			// Registered, but its directory is gone (deleted by hand):
			// forget it so it can be created again.
			if _, err := run(r.Root, "worktree", "prune"); err != nil {
				return "", fmt.Errorf("add worktree %s: %w", name, err)
			}
		} else if wt.branch == "refs/heads/"+branch {
			if err := CheckWorktree(path); err != nil {
				return "", fmt.Errorf("add worktree %s: %w", name, err)
			}
			return path, nil // as built from Root, the same string as when created
		} else {
			return "", fmt.Errorf("add worktree %s: %s already exists with %s checked out, not branch %s",
				name, wt.path, describeCheckout(wt), branch)
		}
	}

	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// git would follow it and check the branch out wherever it
		// points (an empty directory is enough).
		return "", fmt.Errorf("add worktree %s: %w", name, CheckWorktree(path))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("add worktree %s: %w", name, err)
	}
	args := []string{"worktree", "add", "--quiet"}
	if _, err := run(r.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		args = append(args, "--", path, branch)
	} else {
		if err := checkArg("base revision", base); err != nil {
			return "", fmt.Errorf("add worktree %s in %s: %w", name, r.Root, err)
		}
		args = append(args, "-b", branch, "--", path, base)
	}
	if _, err := run(r.Root, args...); err != nil {
		if werr := r.gitWritable(); werr != nil {
			return "", fmt.Errorf("add worktree %s: %w: %w", name, werr, err)
		}
		return "", fmt.Errorf("add worktree %s: %w", name, err)
	}
	return path, nil
}

// ErrGitNotWritable says the repository's git directory refuses writes for
// a reason that waiting does not mend (a read-only mount, an immutable or
// foreign-owned directory), unlike a full disk.
var ErrGitNotWritable = errors.New("the repository's git directory cannot be written")

// gitWritable probes the git directory with a scratch file, after a git
// command failed, to tell a git directory that cannot be written from
// other failures; a full disk or quota is not reported (it may pass).
func (r *Repo) gitWritable() error {
	f, err := os.CreateTemp(r.gitDir(), ".orchestra-probe-*")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return nil
	}
	return fmt.Errorf("%w (%w)", ErrGitNotWritable, err)
}

// ErrWorktreeReplaced says a task's worktree is no longer the directory
// git made: a symbolic link, or something else, stands in its place. Git,
// the verify gate and the commit would follow it to wherever it points, so
// nothing runs there; retrying cannot help until someone puts it back.
var ErrWorktreeReplaced = errors.New("the worktree was replaced")

// CheckWorktree reports whether dir is still a linked worktree as git made
// it: a real directory (not a symbolic link to one) holding a .git file
// (the link to the repository), not a .git directory or a link.
func CheckWorktree(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("worktree %s: %w", dir, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(dir)
		return fmt.Errorf("%w: %s is a symbolic link to %s", ErrWorktreeReplaced, dir, to)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is a %s, not a directory", ErrWorktreeReplaced, dir, fi.Mode().Type())
	}
	gl, err := os.Lstat(filepath.Join(dir, ".git"))
	if err != nil {
		return fmt.Errorf("%w: %s has no .git link to the repository: %w", ErrWorktreeReplaced, dir, err)
	}
	if !gl.Mode().IsRegular() {
		return fmt.Errorf("%w: %s/.git is a %s, not the worktree's link to the repository", ErrWorktreeReplaced, dir, gl.Mode().Type())
	}
	return nil
}

// WorktreeRemove removes a linked worktree, discarding anything in it that
// was not committed; its branch stays. Removing one that is already gone is
// not an error.
func (r *Repo) WorktreeRemove(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	unlock, err := r.lockWorktrees()
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", abs, err)
	}
	defer unlock()
	wts, err := r.worktrees()
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", abs, err)
	}
	wt, ok := findWorktree(wts, abs)
	if !ok {
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("remove worktree %s: it is not a linked worktree of %s", abs, r.Root)
	}
	if wt.main {
		return fmt.Errorf("remove worktree %s: it is the main checkout of the repository", abs)
	}
	if wt.prunable {
		_, err = run(r.Root, "worktree", "prune")
	} else {
		// --force: the task's work is committed on its branch before
		// removal; what remains (build output, the agent's scratch) goes.
		_, err = run(r.Root, "worktree", "remove", "--force", "--", wt.path)
	}
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", abs, err)
	}
	return nil
}

// checkWorktreeName accepts a single path element: the name becomes a
// directory under WorktreesDir and must not escape it.
func checkWorktreeName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, "-") {
		return fmt.Errorf("worktree name %q must be one plain path element", name)
	}
	return nil
}

// worktreeEntry is one record of `git worktree list --porcelain`.
type worktreeEntry struct {
	path     string
	head     string
	branch   string // full ref name, empty when detached
	main     bool   // the first record is the main working tree
	prunable bool
}

func (r *Repo) worktrees() ([]worktreeEntry, error) {
	// Not -z: that needs git 2.36, and a worktree path of ours never
	// contains a newline.
	out, err := run(r.Root, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var list []worktreeEntry
	var cur *worktreeEntry
	for _, line := range strings.Split(string(out), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "worktree":
			list = append(list, worktreeEntry{path: val, main: len(list) == 0})
			cur = &list[len(list)-1]
		case "HEAD":
			if cur != nil {
				cur.head = val
			}
		case "branch":
			if cur != nil {
				cur.branch = val
			}
		case "prunable":
			if cur != nil {
				cur.prunable = true
			}
		}
	}
	return list, nil
}

// findWorktree finds path among the entries, comparing resolved paths so a
// symlinked temp or home directory does not hide a match.
func findWorktree(list []worktreeEntry, path string) (worktreeEntry, bool) {
	want := canonical(path)
	for _, wt := range list {
		if canonical(wt.path) == want {
			return wt, true
		}
	}
	return worktreeEntry{}, false
}

func canonical(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	// A missing directory (a prunable entry): resolve its parent instead.
	if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(real, filepath.Base(p))
	}
	return filepath.Clean(p)
}

func describeCheckout(wt worktreeEntry) string {
	if wt.branch == "" {
		return "a detached HEAD"
	}
	return "branch " + strings.TrimPrefix(wt.branch, "refs/heads/")
}

// Exclude adds pattern as a line of the common git dir's info/exclude unless
// it is already there. That file applies to the main checkout and to every
// linked worktree, and, unlike .gitignore, is not part of the project, so
// the console's own state never shows as a change the agent made.
func (r *Repo) Exclude(pattern string) error {
	if pattern == "" || strings.ContainsAny(pattern, "\n\r") {
		return fmt.Errorf("exclude in %s: pattern %q must be one non-empty line", r.Root, pattern)
	}
	common, err := runLine(r.Root, "rev-parse", "--git-common-dir")
	if err != nil {
		return fmt.Errorf("exclude %s: %w", pattern, err)
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(r.Root, common)
	}
	file := filepath.Join(common, "info", "exclude")

	r.excludeMu.Lock()
	defer r.excludeMu.Unlock()
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("exclude %s: %w", pattern, err)
	}
	for _, line := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(line) == pattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("exclude %s: %w", pattern, err)
	}
	add := pattern + "\n"
	if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
		add = "\n" + add
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("exclude %s: %w", pattern, err)
	}
	if _, err := f.WriteString(add); err != nil {
		f.Close()
		return fmt.Errorf("exclude %s in %s: %w", pattern, file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("exclude %s in %s: %w", pattern, file, err)
	}
	return nil
}
