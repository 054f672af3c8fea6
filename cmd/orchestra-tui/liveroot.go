package main

import (
	"os"
	"path/filepath"

	"github.com/orchestra-tui/orchestra-tui/engine"
)

// liveEngineRoot finds, without starting git, the root of the work tree
// around dir when an engine's socket is there: the nearest directory at or
// above dir holding a .git entry (a directory, or a worktree's file), which
// is what `git rev-parse --show-cdup` names. A command that only talks to
// a running engine dials it from there; git costs a process, more than the
// command's own work. It answers false whenever it cannot be sure (git's
// location variables set, no .git found, no socket at the root), and the
// caller then opens the repository through git as before.
func liveEngineRoot(dir string) (string, bool) {
	if os.Getenv("GIT_DIR") != "" || os.Getenv("GIT_WORK_TREE") != "" {
		return "", false
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if fi, err := os.Lstat(engine.PathsFor(d).Socket); err == nil && fi.Mode().Type() == os.ModeSocket {
				return d, true
			}
			return "", false
		}
		up := filepath.Dir(d)
		if up == d {
			return "", false
		}
		d = up
	}
}
