package repo

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// worktreeLock is the lock file, relative to the root, that serialises
// `git worktree add/remove/prune` on one repository.
const worktreeLock = ".orchestra/worktrees.lock"

// lockWorktrees takes the repository's worktree lock and returns its
// release. git's worktree commands read and write the shared
// .git/worktrees/ administrative directory without a lock of their own:
// two adds at once fail with "failed to read .git/worktrees/<other>/
// commondir", and a prune can remove an entry an add is writing. An flock
// (per open file, so it also serialises goroutines of one process) holds
// across processes: the engine and a CLI `prune` never race.
func (r *Repo) lockWorktrees() (func(), error) {
	path := filepath.Join(r.Root, filepath.FromSlash(worktreeLock))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("worktree lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("worktree lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("worktree lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}
