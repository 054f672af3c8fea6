package coord

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The end of the loop: after approve, where the work is, merging it into
// the base branch, publishing it, and retrying a task that ended without
// it. Each step is written once here and used both by the coordinator's
// loop (off it, for the git work) and by the CLI when no console runs, so
// the event texts cannot drift apart.

// BranchInfo is where a task's committed work is, seen from the branch
// checked out in the main checkout.
type BranchInfo struct {
	Branch string // the task's branch
	Into   string // the checked-out branch it would merge into; "" on a detached HEAD
	Ahead  int    // commits on Branch that Into lacks
	Exists bool   // the branch exists (prune removes it)
}

// DescribeBranch reads where t's work is. It runs git: call it off the loop.
func DescribeBranch(r *repo.Repo, t task.Task) BranchInfo {
	b := BranchInfo{Branch: t.Branch, Exists: r.BranchExists(t.Branch)}
	if !b.Exists {
		return b
	}
	into, err := r.CurrentBranch()
	base := "HEAD"
	if err == nil {
		b.Into = into
	} else if t.BaseCommit != "" {
		base = t.BaseCommit
	}
	if n, err := r.CountAhead(base, t.Branch); err == nil {
		b.Ahead = n
	}
	return b
}

// Sentence tells the operator where the work is and the exact command that
// merges it.
func (b BranchInfo) Sentence(id task.ID) string {
	switch {
	case !b.Exists:
		return fmt.Sprintf("Its branch %s no longer exists.", b.Branch)
	case b.Into == "":
		return fmt.Sprintf("The work is on branch %s, %s ahead of its base; check out the branch it should go to, then run `orchestra-tui merge %s`.",
			b.Branch, commits(b.Ahead), id.Short())
	case b.Ahead == 0:
		return fmt.Sprintf("Branch %s has nothing that %s lacks: there is nothing to merge.", b.Branch, b.Into)
	}
	return fmt.Sprintf("The work is on branch %s, %s ahead of %s; merge it with `orchestra-tui merge %s` (or `git merge %s`).",
		b.Branch, commits(b.Ahead), b.Into, id.Short(), b.Branch)
}

func commits(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", n)
}

// mergeMu keeps two merges in one process from racing for the main
// checkout's index; git's own lock refuses the second rather than waiting.
var mergeMu sync.Mutex

// MergeTask merges the approved task t's branch into the branch checked out
// in the main checkout, in the way [finalise] merge says. It returns the
// branch.merged event to record, or an error whose refusal reason says why
// (a conflict leaves the repository exactly as it was). It runs git: call
// it off the loop.
func MergeTask(r *repo.Repo, cfg config.Config, t task.Task, now time.Time) (task.Event, error) {
	switch t.State {
	case task.StateCompleted:
	case task.StateAwaitingReview:
		return task.Event{}, task.Refuse(task.ReasonMergeRefused, "Task %s waits for review: approve it first (`orchestra-tui approve %s`, or a in the console).", t.ID.Short(), t.ID.Short())
	default:
		return task.Event{}, task.Refuse(task.ReasonMergeRefused, "Task %s is %s; only an approved (completed) task is merged.", t.ID.Short(), t.State)
	}
	mergeMu.Lock()
	res, err := r.Merge(t.Branch, repo.MergeMode(cfg.Finalise.Merge), fmt.Sprintf("Merge %s: %s\n\norchestra-tui task %s", t.Branch, t.Title, t.ID))
	mergeMu.Unlock()
	if errors.Is(err, repo.ErrMergeConflict) {
		return task.Event{}, task.Refuse(task.ReasonMergeConflict, "%v", err)
	}
	if err != nil {
		return task.Event{}, task.Refuse(task.ReasonMergeRefused, "%v", err)
	}
	var text string
	switch {
	case res.AlreadyMerged:
		text = fmt.Sprintf("Branch %s is already merged into %s (at %s); nothing to do.", t.Branch, res.Into, repo.Abbrev(res.Head))
	case res.FastForward:
		text = fmt.Sprintf("Merged %s into %s by fast-forward: %s, now at %s.", t.Branch, res.Into, commits(res.Commits), repo.Abbrev(res.Head))
	default:
		text = fmt.Sprintf("Merged %s into %s with merge commit %s (%s).", t.Branch, res.Into, repo.Abbrev(res.Head), commits(res.Commits))
	}
	return task.Event{ID: task.NewULID(now), TaskID: t.ID, Kind: task.EvBranchMerged, Text: text, At: now}, nil
}

// PublishTask pushes t's branch to the configured remote and, where the
// GitHub CLI is installed, opens a pull request whose body is the goal, the
// verdict and the event summary. It returns the branch.pushed event. It runs
// git and gh: call it off the loop.
func PublishTask(ctx context.Context, r *repo.Repo, cfg config.Config, t task.Task, verdict string, events []task.Event, now time.Time) (task.Event, error) {
	remote := cfg.Finalise.Remote
	if err := r.Push(remote, t.Branch); err != nil {
		return task.Event{}, task.Refuse(task.ReasonPushFailed, "%v", err)
	}
	text := fmt.Sprintf("Pushed %s to %s.", t.Branch, remote)
	gh, err := exec.LookPath("gh")
	if err != nil {
		text += " The GitHub CLI (gh) is not installed, so no pull request was opened."
		return task.Event{ID: task.NewULID(now), TaskID: t.ID, Kind: task.EvBranchPushed, Text: text, At: now}, nil
	}
	args := []string{"pr", "create", "--head", t.Branch, "--title", t.Title, "--body", PullRequestBody(t, verdict, events)}
	if into, err := r.CurrentBranch(); err == nil {
		args = append(args, "--base", into)
	}
	cmd := exec.CommandContext(ctx, gh, args...)
	cmd.Dir = r.Root
	out, err := cmd.CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if err != nil {
		return task.Event{}, task.Refuse(task.ReasonPushFailed, "Pushed %s to %s, but gh pr create failed: %v: %s", t.Branch, remote, err, lastLineOf(msg))
	}
	text += " Pull request: " + lastLineOf(msg)
	return task.Event{ID: task.NewULID(now), TaskID: t.ID, Kind: task.EvBranchPushed, Text: text, At: now}, nil
}

// PullRequestBody is the body of a task's pull request: its goal and
// acceptance, the verdict, and a summary of its ledger.
func PullRequestBody(t task.Task, verdict string, events []task.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Goal\n\n%s\n", strings.TrimSpace(t.Goal))
	if len(t.Acceptance) > 0 {
		b.WriteString("\n## Acceptance\n\n")
		for _, a := range t.Acceptance {
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	if verdict == "" {
		verdict = "no verdict recorded"
	}
	fmt.Fprintf(&b, "\n## Verdict\n\n%s (`%s`, re-run by orchestra-tui)\n", verdict, t.Verify)
	counts := map[task.Kind]int{}
	for _, e := range events {
		counts[e.Kind]++
	}
	fmt.Fprintf(&b, "\n## Events\n\n%s, %s, %s, %s, %s.\n",
		plural(counts[task.EvSessionLaunched], "session"), plural(counts[task.EvDecisionRecorded], "human correction"),
		plural(counts[task.EvDeadEnd], "dead end"), plural(counts[task.EvRefusal], "refusal"),
		plural(counts[task.EvLeaseExpired], "lease expiry", "lease expiries"))
	for _, e := range events {
		switch e.Kind {
		case task.EvPhaseAdvanced, task.EvDecisionRecorded, task.EvDeadEnd, task.EvVerifyFinished, task.EvTaskAwaiting, task.EvTaskCompleted:
			fmt.Fprintf(&b, "- %s %s\n", e.At.UTC().Format("2006-01-02 15:04"), oneLine(e.Text))
		}
	}
	fmt.Fprintf(&b, "\norchestra-tui task %s\n", t.ID)
	return b.String()
}

func plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func lastLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// retryEdit gives a retried task a fresh attempt budget at the phase it
// ended in. Its dead ends, decisions, artifacts and worktree are kept: the
// next brief names what already failed.
func retryEdit(n *task.Task) { n.Attempt, n.Reason = 0, "" }

// retryText is the task.retried event's text.
func retryText(t task.Task, author string, maxAttempts, deadEnds int) string {
	return fmt.Sprintf("Retried by %s: queued for phase %s with a fresh budget of %s; %s kept for the brief.",
		author, t.Phase, plural(maxAttempts, "attempt"), plural(deadEnds, "dead end"))
}

// retry is the loop's side of CmdRetry.
func (cm *commands) retry(ctx context.Context, t task.Task, cmd Command) cmdReply {
	if _, err := task.Apply(t.State, task.ActRetry); err != nil {
		return cmdReply{err: fmt.Errorf("task %s: %w", t.ID.Short(), err)}
	}
	des, err := cm.st.DeadEndList(ctx, t.ID)
	if err != nil {
		return cmdReply{err: fmt.Errorf("retry task %s: %w", t.ID.Short(), err)}
	}
	ev := cm.loop.event(t.ID, "", task.EvTaskRetried, retryText(t, authorOf(cmd), cm.cfg.Lease.MaxAttempts, len(des)))
	if !cm.life.move(ctx, t.ID, 0, task.ActRetry, retryEdit, ev) {
		return cmdReply{err: fmt.Errorf("cannot retry task %s: it is %s", t.ID.Short(), cm.tasks[t.ID].State)}
	}
	return cmdReply{res: Result{TaskID: t.ID, Message: fmt.Sprintf("queued again for phase %s with a fresh attempt budget", t.Phase)}}
}

// approve is the loop's side of CmdApprove: it reads where the work is off
// the loop, then moves the task with an event that says so, and publishes
// the branch when [finalise] push is set.
func (cm *commands) approve(ctx context.Context, t task.Task, cmd Command) cmdReply {
	if _, err := task.Apply(t.State, task.ActApprove); err != nil {
		return cmdReply{err: fmt.Errorf("cannot approve task %s: it is %s, not awaiting review", t.ID.Short(), t.State)}
	}
	later := make(chan cmdReply, 1)
	r := cm.repo
	cm.loop.async(func() func() {
		info := DescribeBranch(r, t)
		return func() {
			id := t.ID
			if cm.cfg.Finalise.PR {
				cm.pr.approve(ctx, id, cmd, info, later)
				return
			}
			if cm.cfg.Finalise.Queue {
				later <- cm.mq.approve(ctx, id, cmd, info)
				return
			}
			sentence := info.Sentence(id)
			ev := cm.loop.event(id, "", task.EvTaskCompleted, "Approved by "+authorOf(cmd)+". "+sentence)
			if !cm.life.move(ctx, id, 0, task.ActApprove, nil, ev) {
				later <- cmdReply{err: fmt.Errorf("cannot approve task %s: it is %s, not awaiting review", id.Short(), cm.tasks[id].State)}
				return
			}
			if cm.cfg.Finalise.Push {
				cm.publishBranch(ctx, cm.tasks[id])
			}
			later <- cmdReply{res: Result{TaskID: id, Message: "approved. " + sentence}}
		}
	})
	return cmdReply{later: later}
}

// publishBranch pushes an approved task's branch off the loop and records what
// happened.
func (cm *commands) publishBranch(ctx context.Context, t task.Task) {
	verdict := ""
	if v := cm.verdicts[t.ID]; v != nil {
		verdict = v.Line()
	}
	r, cfg, st := cm.repo, cm.cfg, cm.st
	cm.loop.async(func() func() {
		evs, _ := st.EventList(ctx, store.EventListParams{TaskID: t.ID})
		ev, err := PublishTask(ctx, r, cfg, t, verdict, evs, cm.loop.now())
		return func() {
			if err != nil {
				cm.loop.record(ctx, cm.loop.refusalFrom(t.ID, err))
				return
			}
			cm.loop.record(ctx, ev)
		}
	})
}

// merge is the loop's side of CmdMerge: git works off the loop; the event
// is recorded on it.
func (cm *commands) merge(ctx context.Context, t task.Task) cmdReply {
	if cm.cfg.Finalise.Queue {
		return cm.mq.merge(ctx, t)
	}
	later := make(chan cmdReply, 1)
	r, cfg := cm.repo, cm.cfg
	cm.loop.async(func() func() {
		ev, err := MergeTask(r, cfg, t, cm.loop.now())
		return func() {
			if err != nil {
				cm.loop.record(ctx, cm.loop.refusalFrom(t.ID, err))
				later <- cmdReply{err: err}
				return
			}
			// The task says it is merged now; recorded as an event
			// only when something else moved it meanwhile.
			if cm.tasks[t.ID].State != task.StateCompleted || !cm.life.move(ctx, t.ID, 0, task.ActLand, nil, ev) {
				cm.loop.record(ctx, ev)
			}
			later <- cmdReply{res: Result{TaskID: t.ID, Message: ev.Text}}
		}
	})
	return cmdReply{later: later}
}
