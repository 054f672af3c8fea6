package coord

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The work travels through git. With [fleet] remote set, every phase that
// ends accepted is committed on the task's branch in its worktree and the
// branch is pushed to that remote, before the task moves on; an engine
// that launches a task fetches its branch first, checks that it is this
// repository's history (its root commit, as a handoff is checked), and
// starts the worktree from it. So an engine that takes over the task of a
// lost machine starts from the last phase that machine sealed.
//
// A push that fails is a push-failed refusal carrying git's reason: the
// commit stays in this clone only, and the next accepted phase pushes it
// again with its own.

// pushPhase commits r's worktree on the task's branch and pushes it, then
// runs then on the loop. Without a remote it runs then at once. Like the
// verify gate, it runs under r's lease and is marked as the task's gate, so
// a park or cancel meanwhile makes its result move nothing.
func (g *gate) pushPhase(ctx context.Context, r *run, then func()) {
	remote := g.cfg.Fleet.Remote
	if remote == "" || r.dir == "" {
		then()
		return
	}
	t := g.tasks[r.taskID]
	dir := r.dir
	g.gating[r.taskID] = r
	if !g.sd.trusted() || g.sw.outage {
		// Past its own liveness deadline the engine pushes nothing: the
		// task may be another engine's by now (stepdown.go). The push
		// waits, the task still marked as gated, until the engine trusts
		// itself again and the store answers (outage.go); it then finds
		// whether the lease is still its own.
		g.holdUntilBack(func() { g.pushPhase(ctx, r, then) })
		return
	}
	seen := r.remoteSeen
	if !r.remoteKnown {
		seen = g.repo.RemoteTracking(remote, t.Branch)
	}
	st, holder, sd, beforePush := g.st, g.holder, g.sd, g.beforePush
	g.loop.async(func() func() {
		sha, committed, err := repo.CommitAll(dir, fmt.Sprintf("%s: phase %s\n\norchestra-tui task %s, session %s", t.Title, r.phase, t.ID, r.sessionID))
		var pushErr, leaseErr error
		held, untrusted := true, false
		if err == nil {
			if !committed {
				sha, _ = g.repo.BranchHead(t.Branch)
			}
			// The push happens only while this engine holds the lease,
			// and only over the commit it last saw on the remote: an
			// engine that took the task over and pushed since wins.
			if beforePush != nil {
				beforePush()
			}
			l, lerr := st.LeaseGet(context.WithoutCancel(ctx), r.taskID)
			switch {
			case lerr != nil && !errors.Is(lerr, store.ErrNotFound):
				held, leaseErr = false, lerr // the store cannot tell
			case lerr != nil || l.Holder != holder || l.Token != r.token:
				held = false
			case !sd.trusted():
				// Trusted on the loop, the engine may have been frozen
				// since (SIGSTOP, a stalled machine) past its own
				// liveness deadline: the lease read may be stale by now,
				// and a takeover's session may work from the commit this
				// push would replace. Checked again at the last moment,
				// by the monotonic clock; the push waits as above.
				untrusted = true
			default:
				pushErr = g.repo.PushLease(remote, t.Branch, seen)
			}
		}
		return func() {
			if g.gating[r.taskID] != r {
				return // parked or cancelled meanwhile: the commit stays, the task does not move
			}
			if untrusted {
				g.holdUntilBack(func() { g.pushPhase(ctx, r, then) })
				return
			}
			if leaseErr != nil && g.sw.path == "" {
				// The store does not answer: whose the lease is cannot
				// be known, so the push waits until it answers.
				g.writeFailed(leaseErr)
				g.holdUntilBack(func() { g.pushPhase(ctx, r, then) })
				return
			}
			delete(g.gating, r.taskID)
			if !held || errors.Is(pushErr, repo.ErrPushStale) {
				// Another engine holds the task (or pushed it since):
				// its work is the branch's; this one moves nothing.
				why := fmt.Sprintf("Phase %s's commit %s was not pushed: the lease of token %d is no longer this engine's.", r.phase, repo.Abbrev(sha), r.token)
				if pushErr != nil {
					why = fmt.Sprintf("Phase %s's commit %s was not pushed: %v; another engine holds the task.", r.phase, repo.Abbrev(sha), pushErr)
				}
				g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, task.ReasonStaleLeaseToken, why))
				g.life.reloadTask(ctx, r.taskID)
				if g.tasks[r.taskID].State.Live() {
					g.foreign[r.taskID] = true
				}
				return
			}
			if pushErr == nil && err == nil {
				r.remoteSeen, r.remoteKnown = sha, true
			}
			if err != nil {
				g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, task.ReasonCommitFailed, err.Error()))
				g.life.requeue(ctx, r, task.ReasonCommitFailed, err.Error(), true)
				return
			}
			if pushErr != nil {
				g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, task.ReasonPushFailed, fmt.Sprintf(
					"Pushing %s (%s) to %s after phase %s: %v. The work is committed in this clone only; another machine taking the task over would not see it.",
					t.Branch, repo.Abbrev(sha), remote, r.phase, pushErr)))
			} else {
				g.recordFor(ctx, r.token, g.loop.event(r.taskID, r.sessionID, task.EvBranchPushed,
					fmt.Sprintf("Pushed %s (%s) to %s after phase %s.", t.Branch, repo.Abbrev(sha), remote, r.phase)))
			}
			then()
		}
	})
}

// fetchTaskBranch runs off the loop before a worktree is prepared: it
// fetches the task's branch from [fleet] remote and returns the commit the
// worktree should start from when the branch is not in this clone yet ("" to
// keep the task's base), and the fetched commit to fast-forward an existing
// worktree to. A branch of another repository is refused; a remote that
// cannot be reached is not fatal (note says why, for a fetch-failed
// refusal): the session starts from what this clone has, and its brief's
// continuity says where the work stood. r is this clone.
func fetchTaskBranch(r *repo.Repo, remote string, t task.Task) (base, fetched, note string, err error) {
	if remote == "" {
		return "", "", "", nil
	}
	fetched, err = r.FetchBranch(remote, t.Branch)
	if errors.Is(err, repo.ErrForeignBranch) {
		return "", "", "", &task.Refusal{Reason: task.ReasonBranchForeign, Detail: err.Error()}
	}
	if err != nil {
		return "", "", err.Error(), nil
	}
	if fetched != "" && !r.BranchExists(t.Branch) {
		base = fetched
	}
	return base, fetched, "", nil
}
