package coord

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// The merge queue ([finalise] queue): approving a task queues it; the loop
// integrates one queued task at a time. Off the loop, in a scratch
// worktree, the task's branch is merged (or rebased) onto the current base
// and the task's verify command re-run on the result; back on the loop the
// base branch moves only when that run is green, by compare-and-swap. A
// conflict or a red run sends the task back to implement by itself, with a
// dead end naming the new base and the conflicting files or the failing
// tests; no attempt is charged. It fails closed: nothing but a green
// integrated tree ever moves the base.

// mergeQueue is the queue: its state on the loop, and what it sees of the
// coordinator: the loop (loopView), the task map (tasksView), the store,
// the repository and configuration, the fleet key to check a task with,
// and two functions of the loop's.
type mergeQueue struct {
	busy    task.ID   // the task being integrated; "" when idle
	retryAt time.Time // after a refusal to land (a dirty checkout of the base), the next try
	said    string    // the last wait refusal recorded, so it is said once
	swept   bool      // tasks left integrating by an engine that stopped were queued again

	loop  loopView
	tasks tasksView
	st    store.Store
	repo  *repo.Repo
	cfg   config.Config
	key   *signer
	// shared says other engines share the store.
	shared bool
	// fault is the store watch's fault, "" while the store answers.
	fault func() string
	// recordVerdict records a verify verdict of the task (advance.go).
	recordVerdict func(ctx context.Context, id task.ID, sessionID string, p task.Phase, v verify.Verdict, prefix string, token int64) bool
}

// baseRetry is how long the queue waits before trying again to land on a
// base checked out with uncommitted changes.
const baseRetry = 5 * time.Second

// mergeOutcome is what integrating a task came to, off the loop.
type mergeOutcome struct {
	in       repo.Integration
	err      error // git failed, or the base could not be named
	conflict *repo.ConflictError
	verdict  *verify.Verdict // the tests on the integrated tree
	prepared string          // what was done to the task's worktree for its return
}

// queueBase names the branch the queue lands on: [finalise] base, else the
// branch checked out in the main checkout.
func queueBase(r *repo.Repo, cfg config.Config) (string, error) {
	if b := strings.TrimSpace(cfg.Finalise.Base); b != "" {
		return b, nil
	}
	b, err := r.CurrentBranch()
	if err != nil {
		return "", fmt.Errorf("the merge queue has no base branch: %w, or set [finalise] base", err)
	}
	return b, nil
}

// integrateTask brings t's branch onto the base and runs its tests there.
// It runs git and the verify command: call it off the loop.
func integrateTask(ctx context.Context, r *repo.Repo, cfg config.Config, t task.Task) mergeOutcome {
	var o mergeOutcome
	base, err := queueBase(r, cfg)
	if err != nil {
		o.err = err
		return o
	}
	msg := fmt.Sprintf("Merge %s: %s\n\norchestra-tui task %s", t.Branch, t.Title, t.ID)
	o.in, err = r.Integrate(string(t.ID), t.Branch, base, repo.IntegrateMode(cfg.Finalise.Integrate), repo.MergeMode(cfg.Finalise.Merge), msg)
	if errors.As(err, &o.conflict) {
		o.prepared = prepareReturn(r, t, o.conflict.Old, base)
		return o
	}
	if err != nil {
		o.err = err
		return o
	}
	if o.in.AlreadyMerged {
		return o
	}
	v := verify.Run(ctx, verify.Params{Dir: o.in.Dir, Command: t.Verify, Timeout: cfg.Verify.Timeout.Duration, Task: "merge-" + string(t.ID), Owner: repoOwner(r)})
	o.verdict = &v
	if v.Status != verify.StatusOK {
		_ = r.Discard(o.in)
		o.prepared = prepareReturn(r, t, o.in.Old, base)
	}
	return o
}

// prepareReturn merges the base into the task's own worktree, so the
// session that rebuilds it starts from the new base: with the conflict
// markers to resolve, or with the tests that fail there. The finalize
// commit concludes the merge. It says what it did, for the brief.
func prepareReturn(r *repo.Repo, t task.Task, baseHead, base string) string {
	dir := filepath.Join(r.Root, filepath.FromSlash(repo.WorktreesDir), string(t.ID))
	if _, err := os.Stat(dir); err != nil {
		return fmt.Sprintf("Merge %s (at %s) into your branch (git merge %s) before you change anything.", base, repo.Abbrev(baseHead), repo.Abbrev(baseHead))
	}
	files, err := repo.MergeInto(dir, baseHead, fmt.Sprintf("Merge %s into %s", base, t.Branch))
	switch {
	case err != nil:
		return fmt.Sprintf("The console could not merge %s (at %s) into your branch (%v): merge it yourself (git merge %s) before you change anything.", base, repo.Abbrev(baseHead), err, repo.Abbrev(baseHead))
	case len(files) > 0:
		return fmt.Sprintf("The console started merging %s (at %s) into your branch in this worktree; it stopped with conflict markers in %s. Resolve them, keeping what both sides meant; the console commits the merge with your work.",
			base, repo.Abbrev(baseHead), strings.Join(files, ", "))
	}
	return fmt.Sprintf("The console merged %s (at %s) into your branch in this worktree.", base, repo.Abbrev(baseHead))
}

// tick starts integrating the oldest queued task when none is being
// integrated. It runs on the loop.
func (q *mergeQueue) tick(ctx context.Context) {
	if !q.cfg.Finalise.Queue || q.busy != "" || q.fault() != "" || q.loop.now().Before(q.retryAt) {
		return
	}
	if !q.swept {
		q.swept = true
		if !q.shared {
			// One engine per store: a task integrating now was left so
			// by an engine that stopped mid-way. It is integrated again.
			for _, id := range q.tasks.ids() {
				if q.tasks.get(id).State == task.StateIntegrating {
					q.tasks.move(ctx, id, 0, task.ActUnqueue, nil, q.loop.event(id, "", task.EvMergeQueued,
						"Merge queue: the engine stopped while integrating this task; it is queued again and nothing was landed."))
				}
			}
		}
	}
	var next task.Task
	found := false
	for _, id := range q.tasks.ids() {
		t := q.tasks.get(id)
		if t.State == task.StateMergeQueued && (!found || t.UpdatedAt.Before(next.UpdatedAt)) {
			next, found = t, true
		}
	}
	if !found {
		return
	}
	ev := q.loop.event(next.ID, "", task.EvMergeStarted, fmt.Sprintf("Merge queue: integrating %s onto the base (%s) in a scratch worktree, then running %s there.",
		next.Branch, q.cfg.Finalise.Integrate, next.Verify))
	if !q.tasks.move(ctx, next.ID, 0, task.ActIntegrate, nil, ev) {
		return
	}
	q.busy = next.ID
	t := q.tasks.get(next.ID)
	r, cfg := q.repo, q.cfg
	sigErr := q.key.check(t) // its verify command runs in the scratch worktree
	q.loop.async(func() func() {
		var o mergeOutcome
		if sigErr != nil {
			o.err = signatureRefusal(sigErr)
		} else {
			o = integrateTask(q.loop.io(), r, cfg, t)
		}
		return func() { q.integrated(ctx, t.ID, o) }
	})
}

// integrated applies what integrating a task came to, on the loop.
func (q *mergeQueue) integrated(ctx context.Context, id task.ID, o mergeOutcome) {
	q.busy = ""
	r := q.repo
	discard := func() {
		in := o.in
		if in.Dir != "" {
			q.loop.async(func() func() { _ = r.Discard(in); return nil })
		}
	}
	t := q.tasks.get(id)
	if t.State != task.StateIntegrating {
		discard()
		q.loop.record(ctx, q.loop.event(id, "", task.EvMergeStarted, fmt.Sprintf("Merge queue: the task became %s while it was integrated; nothing was landed.", t.State)))
		return
	}
	switch {
	case o.conflict != nil:
		q.returnToImplement(ctx, t, task.ReasonMergeConflict, o.conflict.Old,
			fmt.Sprintf("Merging onto %s (now at %s) conflicts in %s; nothing was landed.", o.conflict.Base, repo.Abbrev(o.conflict.Old), strings.Join(o.conflict.Files, ", ")),
			o.prepared)
		return
	case o.err != nil:
		q.loop.record(ctx, q.loop.refusal(id, "", task.ReasonMergeRefused, "The merge queue could not integrate it: "+o.err.Error()))
		q.tasks.move(ctx, id, 0, task.ActHold, nil, q.loop.event(id, "", task.EvTaskAwaiting,
			"Merge queue: nothing was landed; the task waits for review again. Approve it once the cause is fixed."))
		return
	case o.in.AlreadyMerged:
		q.tasks.move(ctx, id, 0, task.ActLand, nil, q.loop.event(id, "", task.EvBranchMerged,
			fmt.Sprintf("Branch %s is already merged into %s (at %s); nothing to do.", t.Branch, o.in.Base, repo.Abbrev(o.in.Old))))
		return
	}
	on := fmt.Sprintf("Merge queue, on %s with %s merged: ", o.in.Base, t.Branch)
	q.recordVerdict(ctx, id, "", t.Phase, *o.verdict, on, 0)
	if o.verdict.Status != verify.StatusOK {
		why := o.verdict.Line()
		if names := verify.FailedTests(o.verdict.Tail); len(names) > 0 {
			why = "failing: " + strings.Join(names, ", ") + " (" + why + ")"
		}
		q.returnToImplement(ctx, t, task.ReasonIntegrationRed, o.in.Old,
			fmt.Sprintf("Green on its branch, red once merged onto %s (at %s): %s; nothing was landed.", o.in.Base, repo.Abbrev(o.in.Old), why),
			o.prepared)
		return
	}
	defer discard()
	landed, err := r.Land(o.in, "orchestra-tui merge queue: "+t.Branch)
	switch {
	case errors.Is(err, repo.ErrBaseMoved):
		q.tasks.move(ctx, id, 0, task.ActUnqueue, nil, q.loop.event(id, "", task.EvMergeQueued, "Merge queue: "+err.Error()+"; it is integrated again on the new base."))
		return
	case errors.Is(err, repo.ErrBaseCheckoutDirty):
		q.retryAt = q.loop.now().Add(baseRetry)
		q.tasks.move(ctx, id, 0, task.ActUnqueue, nil, q.loop.event(id, "", task.EvMergeQueued, "Merge queue: waiting to land, tests green on the result."))
		if q.said != err.Error() {
			q.said = err.Error()
			q.loop.record(ctx, q.loop.refusal(id, "", task.ReasonBaseBusy, fmt.Sprintf("Commit or stash the changes in %s, or switch to another branch; the queue tries again every %s.", r.Root, baseRetry)))
		}
		return
	case err != nil:
		q.loop.record(ctx, q.loop.refusal(id, "", task.ReasonMergeRefused, "The merge queue could not land it: "+err.Error()))
		q.tasks.move(ctx, id, 0, task.ActHold, nil, q.loop.event(id, "", task.EvTaskAwaiting,
			"Merge queue: nothing was landed; the task waits for review again. Approve it once the cause is fixed."))
		return
	}
	q.said = ""
	q.tasks.move(ctx, id, 0, task.ActLand, nil, q.loop.event(id, "", task.EvBranchMerged, landedText(t, o.in, landed, *o.verdict)))
}

// landedText is the branch.merged event of a landing.
func landedText(t task.Task, in repo.Integration, l repo.Landed, v verify.Verdict) string {
	how := "with merge commit " + repo.Abbrev(in.New)
	switch {
	case in.FastForward:
		how = "by fast-forward"
	case in.Rebased:
		how = "rebased, now at " + repo.Abbrev(in.New)
	}
	text := fmt.Sprintf("Merged %s into %s %s: %s, %s moved from %s to %s by the merge queue, its tests green there (%s).",
		t.Branch, in.Base, how, commits(in.Commits), in.Base, repo.Abbrev(in.Old), repo.Abbrev(in.New), v.Line())
	switch {
	case l.CheckoutMoved:
		text += " Your checkout of " + in.Base + " was fast-forwarded."
	case l.CheckoutOn != "" && l.CheckoutOn != in.Base:
		text += " Your checkout (on " + l.CheckoutOn + ") was not touched."
	}
	return text
}

// returnToImplement sends an integrating task back to implement on the new
// base, with a dead end its next brief lists; no attempt is charged.
func (q *mergeQueue) returnToImplement(ctx context.Context, t task.Task, reason task.Reason, baseHead, what, prepared string) {
	phase := task.PhaseImplement
	if !t.Pipeline.Has(phase) {
		phase = t.Phase
	}
	text := what + " " + prepared
	d := store.DeadEnd{TaskID: t.ID, Phase: phase, Attempt: t.Attempt, Text: "Merge queue: " + text, At: q.loop.now()}
	if err := q.st.DeadEndInsert(ctx, d, q.loop.event(t.ID, "", task.EvDeadEnd, "Dead end recorded: Merge queue: "+text)); err != nil {
		q.loop.record(ctx, q.loop.refusal(t.ID, "", task.ReasonStoreFailed, "Dead end: "+err.Error()))
	}
	ev := q.loop.event(t.ID, "", task.EvMergeReturned, fmt.Sprintf("Back to phase %s by the merge queue, no attempt charged: %s", phase, what))
	ev.Reason = reason
	q.tasks.move(ctx, t.ID, 0, task.ActReturn, func(n *task.Task) {
		n.Phase, n.Attempt, n.Reason = phase, 0, string(reason)
		if baseHead != "" {
			n.BaseCommit = baseHead
		}
	}, ev)
}

// queue puts an approved (or completed) task in the merge queue, on
// the loop, with the event that says so.
func (q *mergeQueue) queue(ctx context.Context, t task.Task, text string) error {
	if _, err := task.Apply(t.State, task.ActQueueMerge); err != nil {
		return mergeRefusal(t)
	}
	if !q.tasks.move(ctx, t.ID, 0, task.ActQueueMerge, func(n *task.Task) { n.Reason = "" }, q.loop.event(t.ID, "", task.EvMergeQueued, text)) {
		return fmt.Errorf("cannot queue task %s for merge: it is %s", t.ID.Short(), q.tasks.get(t.ID).State)
	}
	return nil
}

// mergeRefusal says why a task in state s is not queued for merge.
func mergeRefusal(t task.Task) error {
	id := t.ID.Short()
	switch t.State {
	case task.StateMergeQueued, task.StateIntegrating:
		return task.Refuse(task.ReasonMergeRefused, "Task %s is already in the merge queue (%s).", id, t.State)
	case task.StateMerged:
		return task.Refuse(task.ReasonMergeRefused, "Task %s is already merged.", id)
	case task.StateAwaitingReview:
		return task.Refuse(task.ReasonMergeRefused, "Task %s waits for review: approve it first (`orchestra-tui approve %s`, or a in the console).", id, id)
	}
	return task.Refuse(task.ReasonMergeRefused, "Task %s is %s; only an approved task is merged.", id, t.State)
}

// QueueMergeOffline queues an approved (completed) or awaiting-review task
// for the merge queue straight in the store, for the CLI when no console
// runs: the queue integrates it when an engine starts.
func QueueMergeOffline(ctx context.Context, st store.Store, id task.ID, text string, now time.Time) (task.Task, error) {
	t, err := st.TaskGet(ctx, id)
	if err != nil {
		return task.Task{}, err
	}
	to, err := task.Apply(t.State, task.ActQueueMerge)
	if err != nil {
		return task.Task{}, mergeRefusal(t)
	}
	next := t
	next.State, next.UpdatedAt, next.Reason = to, now, ""
	ev := task.Event{ID: task.NewULID(now), TaskID: id, Kind: task.EvMergeQueued, At: now, Text: text}
	if err := st.TaskUpdate(ctx, store.TaskUpdateParams{Task: next, ExpectState: t.State, Events: []task.Event{ev}}); err != nil {
		return task.Task{}, fmt.Errorf("queue task %s for merge: %w", id.Short(), err)
	}
	return next, nil
}

// approve is approve with [finalise] queue set: the task goes to
// the merge queue instead of ending, on the loop.
func (q *mergeQueue) approve(ctx context.Context, id task.ID, cmd Command, info BranchInfo) cmdReply {
	text := fmt.Sprintf("Approved by %s; queued for the merge queue: %s is integrated onto the base and lands only if %s is green there.",
		authorOf(cmd), info.Branch, q.tasks.get(id).Verify)
	if err := q.queue(ctx, q.tasks.get(id), text); err != nil {
		return cmdReply{err: fmt.Errorf("cannot approve task %s: %w", id.Short(), err)}
	}
	return cmdReply{res: Result{TaskID: id, Message: "approved and queued for merge: the queue lands it once its tests are green on the base"}}
}

// merge is merge with [finalise] queue set: an approved task
// joins the queue; nothing merges around it.
func (q *mergeQueue) merge(ctx context.Context, t task.Task) cmdReply {
	text := fmt.Sprintf("Queued for the merge queue by merge: %s is integrated onto the base and lands only if %s is green there.", t.Branch, t.Verify)
	if t.State == task.StateAwaitingReview {
		return cmdReply{err: mergeRefusal(t)} // approving is the human's step
	}
	if err := q.queue(ctx, t, text); err != nil {
		return cmdReply{err: err}
	}
	return cmdReply{res: Result{TaskID: t.ID, Message: "queued for merge: the queue lands it once its tests are green on the base"}}
}
