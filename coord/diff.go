package coord

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// DiffQuery says which change of a task to read.
type DiffQuery struct {
	// Scope is the whole branch (the zero value) or one session.
	Scope diff.Scope `json:"scope,omitempty"`
	// Session narrows ScopeSession to one session; empty means the task's
	// last session.
	Session string `json:"session,omitempty"`
}

// Differ is an engine that can show what a task changed. It is apart from
// Engine so that a console over an engine without it still runs; the
// coordinator, the fleet relay and the engine client implement it.
type Differ interface {
	// Diff reads the task's change as q says, from git. It runs git: call
	// it from a tea.Cmd, never from Update or View.
	Diff(ctx context.Context, id task.ID, q DiffQuery) (diff.Result, error)
}

var _ Differ = (*Coordinator)(nil)

// Diff reads what the task changed: its branch against the merge base with
// the branch it lands on (the one checked out, as merge uses), with what
// its worktree holds uncommitted when the worktree is on this machine. A
// branch this clone lacks is fetched from [fleet] remote, where every
// engine of a fleet pushes it after each phase, so the diff of a task
// another engine holds reads the same.
func (c *Coordinator) Diff(ctx context.Context, id task.ID, q DiffQuery) (diff.Result, error) {
	res := diff.Result{Scope: diff.ScopeBranch, Files: []diff.File{}}
	t, err := c.st.TaskGet(ctx, id)
	if err != nil {
		return res, fmt.Errorf("task %s: %w", id.Short(), err)
	}
	if t.Branch == "" {
		res.Note = "no branch yet: the task's work starts on one when its first session launches"
		return res, nil
	}
	r := c.p.Repo
	head, err := branchCommit(c.p.Repo, c.cfg.Fleet.Remote, t.Branch)
	if err != nil {
		return res, err
	}
	if head == "" {
		res.Note = fmt.Sprintf("branch %s is not in this clone yet (nothing committed on it, or not pushed)", t.Branch)
		if pruned, err := branchPruned(ctx, c.st, id); err == nil && pruned {
			res.Note = fmt.Sprintf("branch %s was removed by prune (its work was merged, or dropped by `prune --all`)", t.Branch)
		}
		return res, nil
	}
	land, err := r.CurrentBranch()
	if err != nil {
		land = t.BaseCommit // detached: compare with where the task started
	}
	if land == "" {
		return res, err
	}
	from, err := r.MergeBase(land, head)
	if err != nil {
		return res, err
	}
	res.Base = land + " @ " + repo.Abbrev(from)
	res.Head = t.Branch + " @ " + repo.Abbrev(head)
	to := head
	dir := filepath.Join(r.Root, filepath.FromSlash(repo.WorktreesDir), string(id))
	useWorktree := isDir(dir)

	if q.Scope == diff.ScopeSession {
		res.Scope = diff.ScopeSession
		sessions, err := c.st.SessionList(ctx, id)
		if err != nil {
			return res, err
		}
		s, next, ok := pickSession(sessions, q.Session)
		if !ok {
			res.Note = "no session has run yet"
			return res, nil
		}
		res.Session = s.ID
		start, err := r.CommitBefore(head, s.StartedAt)
		if err != nil {
			return res, err
		}
		if start != "" && start != from {
			if before, _ := r.IsAncestor(start, from); !before {
				from = start
			}
		}
		res.Base = fmt.Sprintf("session %s's start @ %s", short(s.ID), repo.Abbrev(from))
		if next != nil {
			useWorktree = false
			if to, err = r.CommitBefore(head, next.StartedAt); err != nil {
				return res, err
			}
			if to == "" {
				to = from
			}
			res.Head = fmt.Sprintf("session %s's end @ %s", short(s.ID), repo.Abbrev(to))
		}
	}

	var patch []byte
	if useWorktree {
		patch, err = repo.DiffWorktree(dir, from)
		res.Head = "worktree of " + t.Branch
	} else {
		patch, err = r.Diff(from, to)
	}
	if err != nil {
		return res, err
	}
	if len(patch) > diff.MaxPatchBytes {
		res.Note = fmt.Sprintf("the change is %d MiB of patch; only the files in its first %d MiB are shown", len(patch)>>20, diff.MaxPatchBytes>>20)
		patch = patch[:diff.MaxPatchBytes]
	}
	res.Files = diff.Parse(patch)
	if len(res.Files) == 0 && res.Note == "" {
		res.Note = "no change: the compared sides hold the same files"
	}
	return res, nil
}

// branchCommit is the commit the task's branch is at in this clone, fetched
// from [fleet] remote when this clone lacks it or the remote is ahead; ""
// when neither has it (r is this clone, remote [fleet]'s).
func branchCommit(r *repo.Repo, remote, branch string) (string, error) {
	local := ""
	if r.BranchExists(branch) {
		sha, err := r.BranchHead(branch)
		if err != nil {
			return "", err
		}
		local = sha
	}
	if remote == "" {
		return local, nil
	}
	sha, err := r.FetchBranch(remote, branch)
	if err != nil || sha == "" {
		if local == "" && err != nil {
			return "", fmt.Errorf("branch %s is not in this clone and fetching it from %s failed: %w", branch, remote, err)
		}
		return local, nil
	}
	if local == "" {
		return sha, nil
	}
	// The newer of the two: another engine pushed after this clone's
	// last commit, or this clone committed what it has not pushed yet.
	if ahead, _ := r.IsAncestor(local, sha); ahead {
		return sha, nil
	}
	return local, nil
}

// pickSession finds the session id names (the last when empty) and the one
// after it, nil when it is the last.
func pickSession(sessions []store.Session, id string) (s store.Session, next *store.Session, ok bool) {
	for i := range sessions {
		if sessions[i].ID == id || (id == "" && i == len(sessions)-1) {
			if i+1 < len(sessions) {
				next = &sessions[i+1]
			}
			return sessions[i], next, true
		}
	}
	return store.Session{}, nil, false
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// branchPruned reports whether prune removed the task's branch: a diff of a
// merged task whose branch is gone says so, not that it was never pushed.
func branchPruned(ctx context.Context, st store.Store, id task.ID) (bool, error) {
	evs, err := st.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return false, err
	}
	for _, ev := range evs {
		if ev.Kind == task.EvBranchPruned {
			return true, nil
		}
	}
	return false, nil
}
