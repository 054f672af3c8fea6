// Package repo reads git facts and manages task worktrees.
//
// Every read and change runs the git CLI with an exact argv (no shell), in
// the working tree it concerns. The binary is what the operator's own git
// commands and the agents run, so the two never disagree about a linked
// worktree, a shallow clone, a new pack or the repository's config; and it
// is fast where a library was slow: on a 5,000-file repository go-git's
// Worktree().Status() took 103 ms against 26 ms for `git status
// --porcelain`, and go-git v5 could not create linked worktrees at all.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Repo is one git working tree (the main checkout or a linked worktree)
// opened for reading facts and managing task worktrees. Its methods are
// safe for concurrent use.
type Repo struct {
	// Root is the absolute top-level directory of the working tree.
	Root string

	mu sync.Mutex // guards the root-commit cache below

	// rootFor and rootCommit cache the last root-commit walk, keyed by the
	// HEAD it started from: the walk is the only read whose cost grows
	// with history.
	rootFor, rootCommit string

	excludeMu sync.Mutex // serialises read-modify-write of info/exclude
}

// Open opens the git working tree containing dir (dir may be any
// subdirectory). A directory outside any git working tree is refused with
// task.ReasonNotGitRepo.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open repository at %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open repository at %s: %w", abs, err)
	} else if !fi.IsDir() {
		return nil, task.Refuse(task.ReasonNotGitRepo, "%s is not a directory.", abs)
	}
	out, err := run(abs, "rev-parse", "--is-bare-repository", "--is-inside-work-tree", "--show-cdup")
	var ce *commandError
	if errors.As(err, &ce) && strings.Contains(ce.stderr, "not a git repository") {
		return nil, task.Refuse(task.ReasonNotGitRepo, "No git repository at or above %s.", abs)
	}
	if err != nil {
		return nil, fmt.Errorf("open repository at %s: %w", abs, err)
	}
	// --show-cdup prints nothing at the top or outside a working tree, so
	// the output has two or three lines.
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 2 {
		return nil, fmt.Errorf("open repository at %s: git rev-parse printed %q", abs, out)
	}
	if lines[0] == "true" {
		return nil, task.Refuse(task.ReasonNotGitRepo, "%s is a bare repository; tasks need a working tree.", abs)
	}
	if lines[1] != "true" {
		return nil, task.Refuse(task.ReasonNotGitRepo, "%s is inside a .git directory, not a working tree.", abs)
	}
	// The root is found by walking up from abs as the operator named it,
	// not by git's --show-toplevel, which resolves symlinks: paths the
	// console shows and stores keep the spelling the operator used.
	root := abs
	if len(lines) > 2 {
		root = filepath.Clean(filepath.Join(abs, lines[2]))
	}
	return &Repo{Root: root}, nil
}

// Head returns the full sha of HEAD.
func (r *Repo) Head() (string, error) {
	out, err := runLine(r.Root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if exitCode(err) == 1 {
		return "", fmt.Errorf("read HEAD in %s: the repository has no commits yet", r.Root)
	}
	if err != nil {
		return "", fmt.Errorf("read HEAD in %s: %w", r.Root, err)
	}
	return out, nil
}

// isHash reports whether s is a full sha-1 in lower- or upper-case hex.
func isHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// HasCommit reports whether sha (a full 40-hex sha) names a commit present
// in the repository's object store.
func (r *Repo) HasCommit(sha string) bool {
	if !isHash(sha) {
		return false
	}
	_, err := run(r.Root, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// BranchHead returns the full sha the local branch points at.
func (r *Repo) BranchHead(branch string) (string, error) {
	// The refs/heads/ prefix keeps a name starting with '-' from being read
	// as an option.
	out, err := runLine(r.Root, "rev-parse", "--verify", "-q", "refs/heads/"+branch+"^{commit}")
	if exitCode(err) == 1 {
		return "", fmt.Errorf("read branch %q in %s: no such branch", branch, r.Root)
	}
	if err != nil {
		return "", fmt.Errorf("read branch %q in %s: %w", branch, r.Root, err)
	}
	return out, nil
}
