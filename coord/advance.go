package coord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// gate is a phase's end: the verify gate, the verdicts, the push of the
// phase's commits to [fleet] remote, and the move to the next phase or
// back. It sees the loop's task map and the gates that run, the store
// watch's state, and moves tasks and ends runs through the lifecycle.
type gate struct {
	loop   loopView
	st     store.Store
	cfg    config.Config
	repo   *repo.Repo
	key    *signer
	holder string
	owner  string
	hub    *hub
	life   *lifecycle
	sd     *stepDown
	// sw is the store watch's state: an outage holds the gate's writes.
	sw       *storeWatch
	tasks    map[task.ID]task.Task
	gating   map[task.ID]*run
	verdicts map[task.ID]*verify.Verdict
	foreign  map[task.ID]bool
	// writeFailed reports a failed write to the store watch;
	// holdUntilBack holds a step until the store answers (outage.go).
	writeFailed   func(error)
	holdUntilBack func(func())
	// beforePush, when set (tests only), runs off the loop just before
	// a push's last check of the lease and of the engine's trust: where
	// a frozen machine would stop.
	beforePush func()
}

// phaseFinished seals the artifact (fenced by the lease token), stops the
// session and moves the task on: the verify gate runs after implement and as
// the gate of the last phase; other phases advance at once.
func (g *gate) phaseFinished(ctx context.Context, r *run, rep worker.Report) {
	artifact := rep.Artifact
	r.finishing = true
	// The digest is the store's (sha256 of the content), known before the
	// write so the ledger and the live event say the same.
	sum := sha256.Sum256(artifact)
	ev := g.loop.event(r.taskID, r.sessionID, task.EvArtifactSealed,
		fmt.Sprintf("Sealed %s (%d bytes, sha256 %s).", task.ArtifactPath(r.phase), len(artifact), hex.EncodeToString(sum[:])[:12]))
	_, err := g.st.ArtifactSeal(ctx, store.ArtifactSealParams{
		TaskID: r.taskID, Token: r.token, Phase: r.phase, Content: artifact,
		SessionID: r.sessionID, At: g.loop.now(), Events: []task.Event{ev},
	})
	if err != nil && g.sw.path == "" && !errors.Is(err, store.ErrStaleToken) && !errors.Is(err, store.ErrConflict) {
		// A network store that does not answer (a restart, a partition
		// cut short by the call timeout): the finished phase is no fault
		// of the agent's, so it is neither refused nor charged. The seal
		// waits, the session kept, until the store answers (outage.go);
		// the fenced write then tells whether the task is still ours.
		g.writeFailed(err)
		g.holdUntilBack(func() {
			if g.life.runs[r.taskID] == r {
				g.phaseFinished(ctx, r, rep)
			}
		})
		return
	}
	if err != nil {
		// The worker reports a phase once and stops watching, and a
		// finishing run gets no lease ticks and ignores its exit, so
		// returning here would leave the task running forever. Stop the
		// session and run the phase again (counted, so a store that keeps
		// failing ends the task instead of looping).
		reason := task.ReasonArtifactNotSealed
		if errors.Is(err, store.ErrStaleToken) {
			reason = task.ReasonStaleLeaseToken
		}
		detail := "Sealing " + task.ArtifactPath(r.phase) + ": " + err.Error()
		g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, reason, detail))
		r.addError(reason.Sentence() + " " + detail)
		g.life.stopThen(ctx, r, store.SessionKilled, detail, func() {
			g.life.requeue(ctx, r, reason, detail, true)
		})
		return
	}
	g.hub.event(ev)
	t := g.tasks[r.taskID]
	next, hasNext := t.Pipeline.Next(r.phase)
	gate := r.phase == task.PhaseImplement || !hasNext
	ended := fmt.Sprintf("Phase %s finished; its artifact was sealed.", r.phase)
	if rep.AfterExit {
		ended = fmt.Sprintf("Phase %s finished; its artifact was sealed. The agent had exited with code %d after writing it.", r.phase, rep.ExitCode)
	}
	g.life.stopThen(ctx, r, store.SessionExited, ended, func() {
		if !gate {
			g.advance(ctx, r, next)
			return
		}
		g.runGate(ctx, r, artifact, next, hasNext)
	})
}

// runGate re-runs the project's tests in the worktree. The agent's word is
// never the verdict.
func (g *gate) runGate(ctx context.Context, r *run, artifact []byte, next task.Phase, hasNext bool) {
	t := g.tasks[r.taskID]
	if err := g.key.check(t); err != nil {
		// The row changed in the store since the launch: its verify
		// command is not run, and the refusal is no fault of the agent's.
		ref := signatureRefusal(err)
		g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, ref.Reason, ref.Detail))
		g.life.requeue(ctx, r, ref.Reason, ref.Error(), false)
		return
	}
	g.recordFor(ctx, r.token, g.loop.event(r.taskID, r.sessionID, task.EvVerifyStarted, "Verify gate: running "+task.PlainLine(t.Verify)))
	dir := r.dir
	g.gating[r.taskID] = r
	g.loop.async(func() func() {
		if err := repo.CheckWorktree(dir); err != nil {
			return func() { worktreeReplaced(ctx, g, r, err) }
		}
		v := verify.Run(g.loop.io(), verify.Params{Dir: dir, Command: t.Verify, Timeout: g.cfg.Verify.Timeout.Duration, Task: string(t.ID), Owner: g.owner})
		var apply func()
		apply = func() {
			if g.gating[r.taskID] != r {
				// The task was parked or cancelled while this gate ran,
				// and perhaps unparked and relaunched since: the result
				// belongs to a session that is gone. Acting on it would
				// commit the new session's half-done work or move the
				// task under the wrong lease.
				g.loop.record(ctx, g.loop.event(r.taskID, r.sessionID, task.EvVerifyFinished,
					fmt.Sprintf("Verify gate of session %s finished after the task moved on; its result is ignored: %s", short(r.sessionID), v.Line())))
				return
			}
			if g.sw.outage {
				// The store does not answer: the verdict waits, with the
				// task still marked as gated, until it does (outage.go).
				g.holdUntilBack(apply)
				return
			}
			delete(g.gating, r.taskID)
			if !g.recordVerdict(ctx, r.taskID, r.sessionID, r.phase, v, "Verify gate: ", r.token) {
				if g.sw.outage {
					g.gating[r.taskID] = r
					g.holdUntilBack(apply)
				}
				return // fenced out: the task is another engine's
			}
			if g.tasks[r.taskID].State.Terminal() || g.tasks[r.taskID].State == task.StateParked {
				return
			}
			if v.Status != verify.StatusOK {
				g.gateFailed(ctx, r, v)
				return
			}
			if r.phase == task.PhaseReview && reviewAsksChanges(artifact) && t.Pipeline.Has(task.PhaseImplement) {
				g.life.deadEnd(ctx, r, "Review asked for changes: "+reviewIssues(artifact))
				g.backTo(ctx, r, task.PhaseImplement, "the review asked for changes")
				return
			}
			if hasNext {
				g.advance(ctx, r, next)
				return
			}
			g.finalize(ctx, r, v)
		}
		return apply
	})
}

// gateFailed records the dead end and sends the task back: a failing review
// gate goes back to implement; a failing implement gate retries implement.
func (g *gate) gateFailed(ctx context.Context, r *run, v verify.Verdict) {
	g.life.deadEnd(ctx, r, fmt.Sprintf("Attempt %d of %s left the tests failing: %s", r.attempt, r.phase, v.Line()))
	t := g.tasks[r.taskID]
	if r.phase == task.PhaseReview && t.Pipeline.Has(task.PhaseImplement) {
		g.backTo(ctx, r, task.PhaseImplement, "the verify gate failed at review")
		return
	}
	g.life.requeue(ctx, r, task.ReasonVerifyFailing, v.Line(), true)
}

// recordVerdict stores a verdict and its event and keeps it for the UI. A
// non-zero token fences it (a gate's, a baseline's): it reports false when
// the store refused it because another engine holds the task now, and the
// caller must then move nothing; or when a network store does not answer
// (g.sw.outage is then set), and the caller holds it until it does.
func (g *gate) recordVerdict(ctx context.Context, id task.ID, sessionID string, p task.Phase, v verify.Verdict, prefix string, token int64) bool {
	if sessionID == "" && strings.HasPrefix(prefix, "Baseline") && v.Status != verify.StatusError {
		v.Detail = verify.BaselineDetail
	}
	ev := g.loop.event(id, sessionID, task.EvVerifyFinished, prefix+v.Line())
	if v.Status == verify.StatusError {
		ev.Reason = task.ReasonVerifyError
	} else if v.Status == verify.StatusIncomplete {
		ev.Reason = task.ReasonVerifyFailing
	}
	err := g.st.VerdictInsert(ctx, store.VerdictRecord{TaskID: id, SessionID: sessionID, Phase: p, Verdict: v, Token: token}, ev)
	if errors.Is(err, store.ErrStaleToken) {
		g.staleVerdict(ctx, id, sessionID, token, v, err)
		return false
	}
	if err != nil && g.sw.path == "" {
		// A network store's outage: the caller holds the verdict until
		// the store answers (outage.go) instead of acting on a verdict
		// the store does not have.
		g.writeFailed(err)
		return false
	}
	if err != nil {
		g.loop.record(ctx, g.loop.refusal(id, sessionID, task.ReasonVerifyError, "Recording the verdict: "+err.Error()))
		return true
	}
	g.hub.event(ev)
	vv := v
	g.verdicts[id] = &vv
	return true
}

// advance queues the task for its next phase.
// With [fleet] remote set, the phase's work is pushed first (travel.go).
func (g *gate) advance(ctx context.Context, r *run, next task.Phase) {
	g.pushPhase(ctx, r, func() {
		ev := g.loop.event(r.taskID, r.sessionID, task.EvPhaseAdvanced, fmt.Sprintf("Phase %s accepted; next: %s.", r.phase, next))
		g.life.move(ctx, r.taskID, r.token, task.ActRequeue, func(n *task.Task) {
			n.Phase, n.Attempt, n.Reason = next, 0, ""
		}, ev)
	})
}

// backTo sends the task back to an earlier phase.
func (g *gate) backTo(ctx context.Context, r *run, p task.Phase, why string) {
	ev := g.loop.event(r.taskID, r.sessionID, task.EvTaskRequeued, fmt.Sprintf("Back to phase %s: %s.", p, why))
	ev.Reason = task.ReasonVerifyFailing
	g.life.move(ctx, r.taskID, r.token, task.ActRequeue, func(n *task.Task) {
		n.Phase, n.Attempt, n.Reason = p, 0, why
	}, ev)
}

// finalize commits the work to the task's branch and waits for a human.
// Like the gate, the commit runs under the ended session's lease, so it is
// marked as the task's gate until its result is applied: a park or cancel
// meanwhile releases that lease and makes the result move nothing.
func (g *gate) finalize(ctx context.Context, r *run, v verify.Verdict) {
	t := g.tasks[r.taskID]
	dir := r.dir
	g.gating[r.taskID] = r
	g.loop.async(func() func() {
		if err := repo.CheckWorktree(dir); err != nil {
			return func() { worktreeReplaced(ctx, g, r, err) }
		}
		sha, committed, err := repo.CommitAll(dir, fmt.Sprintf("%s\n\norchestra-tui task %s", t.Title, t.ID))
		return func() {
			if g.gating[r.taskID] != r {
				note := fmt.Sprintf("Committing the work of session %s finished after the task was parked or cancelled; its result is ignored", short(r.sessionID))
				if err == nil && committed {
					note += fmt.Sprintf(" (commit %s is on %s)", repo.Abbrev(sha), t.Branch)
				}
				g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, task.ReasonIllegalTransition, note+"."))
				return
			}
			delete(g.gating, r.taskID)
			if err != nil {
				g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, task.ReasonCommitFailed, err.Error()))
				g.life.requeue(ctx, r, task.ReasonCommitFailed, err.Error(), true)
				return
			}
			text := "Verify gate green; waiting for human approval. " + v.Line()
			if committed {
				text = fmt.Sprintf("Committed %s on %s. %s", repo.Abbrev(sha), t.Branch, text)
			}
			// With [fleet] remote set, the branch is pushed before the
			// task waits for a human (travel.go).
			g.pushPhase(ctx, r, func() {
				ev := g.loop.event(r.taskID, r.sessionID, task.EvTaskAwaiting, text)
				g.life.move(ctx, r.taskID, r.token, task.ActAwait, nil, ev)
			})
		}
	})
}

func reviewAsksChanges(artifact []byte) bool {
	var rv struct {
		Verdict string `json:"verdict"`
	}
	return json.Unmarshal(artifact, &rv) == nil && rv.Verdict == "changes"
}

func reviewIssues(artifact []byte) string {
	var rv struct {
		Summary string   `json:"summary"`
		Issues  []string `json:"issues"`
	}
	if json.Unmarshal(artifact, &rv) != nil {
		return ""
	}
	return strings.TrimSpace(rv.Summary + " " + strings.Join(rv.Issues, "; "))
}

// worktreeReplaced ends a phase whose worktree is no longer the one git
// made (repo.CheckWorktree): the gate or commit does not run wherever it
// points, and the phase is counted with the real reason, so a worktree
// nobody puts back fails the task after max_attempts (each relaunch is
// refused for it) instead of being retried for ever.
func worktreeReplaced(ctx context.Context, g *gate, r *run, err error) {
	if g.gating[r.taskID] != r {
		return // parked or cancelled meanwhile
	}
	delete(g.gating, r.taskID)
	text := fmt.Sprintf("Session %s's phase %s ends: %v. Nothing was run or committed there.", short(r.sessionID), r.phase, err)
	g.loop.record(ctx, g.loop.refusal(r.taskID, r.sessionID, task.ReasonWorktreeFailed, text))
	g.life.deadEnd(ctx, r, fmt.Sprintf("Attempt %d of %s: %v", r.attempt, r.phase, err))
	g.life.requeue(ctx, r, task.ReasonWorktreeFailed, text, true)
}
