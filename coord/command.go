package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

type cmdRequest struct {
	cmd   Command
	reply chan cmdReply
}

type cmdReply struct {
	res Result
	err error
	// wait, when set, completes the command off the loop: the decision is
	// recorded as delivered and is being typed into the pane.
	wait <-chan error
	// later, when set, carries the whole reply of a command that
	// completes off the loop (a resume).
	later <-chan cmdReply
}

// ErrStopped means the coordinator is not running.
var ErrStopped = errors.New("the coordinator is not running")

// commands carries out the operator's commands on the loop: add, cancel,
// park, corrections and decisions, retry, approve, merge, resume. It sees
// the loop's tasks, runs and gates, moves tasks through the lifecycle and
// hands approvals to the merge queue or the pull requests.
type commands struct {
	loop    loopView
	st      store.Store
	cfg     config.Config
	repo    *repo.Repo
	key     *signer
	hub     *hub
	life    *lifecycle
	leases  *leaseService
	usage   *usageBook
	mq      *mergeQueue
	pr      *pullRequests
	reviews *reviews
	// shared is set when other engines share the store (fleet.go).
	shared   bool
	tasks    map[task.ID]task.Task
	runs     map[task.ID]*run
	gating   map[task.ID]*run
	verdicts map[task.ID]*verify.Verdict
	foreign  map[task.ID]bool
	// ids are the tasks in creation order; hostOf names the machine that
	// runs a task (fleet.go); noteModel remembers a task's model.
	ids       func() []task.ID
	hostOf    func(task.ID) string
	noteModel func(task.ID, string)
	// unparkedFromBudget clears a task's budget park (budget.go); place
	// and publish are the loop's placement and snapshot.
	unparkedFromBudget func(task.Task)
	place              func(context.Context) bool
	publish            func()
}

func (cm *commands) handleCommand(ctx context.Context, cmd Command) cmdReply {
	if cmd.Kind == CmdAdd {
		if cmd.Task == nil {
			return cmdReply{err: errors.New("add: no task given")}
		}
		t, err := cm.addTask(ctx, *cmd.Task, taskSource{URL: cmd.Source, Issue: cmd.Issue})
		if err != nil {
			return cmdReply{err: err}
		}
		return cmdReply{res: Result{TaskID: t.ID, Message: "added task " + t.ID.Short() + ": " + t.Title}}
	}
	if cmd.Kind == CmdResume {
		return cm.resumeCommand(ctx, cmd)
	}
	id, err := cm.resolve(cmd.TaskID)
	if err != nil {
		return cmdReply{err: err}
	}
	t := cm.tasks[id]
	r := cm.runs[id]
	res := Result{TaskID: id}
	switch cmd.Kind {
	case CmdCorrect:
		return cm.correct(ctx, t, r, cmd)
	case CmdRefuse:
		return refuseOutside(ctx, cm.st, cm.hub.event, t, cm.loop.refusal(t.ID, "", task.ReasonForgeNotAllowed, cmd.Text), cmd)
	case CmdRequestChanges:
		return cm.reviews.requestChanges(ctx, t, cmd)
	case CmdResolve:
		return cm.reviews.resolveComment(ctx, t, cmd)
	case CmdResubmit:
		if r == nil || r.w == nil || !r.confirmed {
			return cmdReply{err: fmt.Errorf("task %s has no live, confirmed session to resubmit", id.Short())}
		}
		cm.leases.resubmit(ctx, r, authorOf(cmd))
		res.SessionID, res.Message = r.sessionID, "resubmitted session "+short(r.sessionID)
	case CmdExtend:
		if r == nil {
			return cmdReply{err: fmt.Errorf("task %s holds no lease to extend", id.Short())}
		}
		d := cmd.Duration
		if d <= 0 {
			d = 10 * time.Minute
		}
		l := r.lease.Extend(d)
		ev := cm.loop.event(id, r.sessionID, task.EvLeaseExtended, fmt.Sprintf("Lease extended by %s by %s; deadline %s.", d, authorOf(cmd), l.Deadline.UTC().Format("15:04:05")))
		if err := renewLease(ctx, cm.st, cm.tasks, cm.loop.now(), l, ev); err != nil {
			return cmdReply{err: fmt.Errorf("extend lease: %w", err)}
		}
		cm.hub.event(ev)
		r.lease = l
		res.Message = "lease extended by " + d.String()
	case CmdExpire:
		switch {
		case cm.gating[id] != nil:
			return cmdReply{err: fmt.Errorf("task %s is in its verify gate: no session runs to expire, and the gate's verdict moves it next; park it to stop the gate's result from counting", id.Short())}
		case r != nil && (r.stopping || r.finishing):
			return cmdReply{err: fmt.Errorf("task %s's session %s is already being stopped (its phase finished or its lease ended); it moves on by itself", id.Short(), short(r.sessionID))}
		case r == nil:
			return cmdReply{err: fmt.Errorf("task %s holds no lease to expire: it is %s", id.Short(), t.State)}
		}
		cm.leases.expire(ctx, r, task.ReasonLeaseExpiredByHand, "Expired by "+authorOf(cmd)+".")
		res.Message = "lease expired; the task is requeued"
	case CmdCancel:
		if !cm.stopAndMove(ctx, t, r, task.ActCancel, task.EvTaskCancelled, "Cancelled by "+authorOf(cmd)+".") {
			return cmdReply{err: fmt.Errorf("cannot cancel task %s: it is %s", id.Short(), t.State)}
		}
		res.Message = "cancelled"
	case CmdPark:
		if !cm.stopAndMove(ctx, t, r, task.ActPark, task.EvTaskParked, "Parked by "+authorOf(cmd)+".") {
			return cmdReply{err: fmt.Errorf("cannot park task %s: it is %s", id.Short(), t.State)}
		}
		res.Message = "parked; unpark to queue it again"
	case CmdUnpark:
		cm.unparkedFromBudget(t)
		if !cm.life.move(ctx, id, 0, task.ActUnpark, func(n *task.Task) { n.Reason = "" }, cm.loop.event(id, "", task.EvTaskUnparked, "Unparked by "+authorOf(cmd)+".")) {
			return cmdReply{err: fmt.Errorf("cannot unpark task %s: it is %s", id.Short(), t.State)}
		}
		res.Message = "unparked; queued"
	case CmdApprove:
		return cm.approve(ctx, t, cmd)
	case CmdRetry:
		return cm.retry(ctx, t, cmd)
	case CmdMerge:
		return cm.merge(ctx, t)
	default:
		return cmdReply{err: fmt.Errorf("unknown command %q", cmd.Kind)}
	}
	return cmdReply{res: res}
}

// stopAndMove applies an operator action that ends any live session: the
// state changes at once (fenced by the lease token); the session is stopped
// off the loop and its exit is expected.
func (cm *commands) stopAndMove(ctx context.Context, t task.Task, r *run, a task.Action, kind task.Kind, text string) bool {
	var token int64
	sessionID := ""
	if r != nil {
		token, sessionID = r.token, r.sessionID
	} else if g := cm.gating[t.ID]; g != nil {
		// In its verify gate the task has no run but still holds the
		// ended session's lease: move under that token so the lease is
		// released with the move.
		token, sessionID = g.token, g.sessionID
	}
	var edit func(*task.Task)
	if a == task.ActPark && (t.State == task.StateLeased || t.State == task.StateRunning) && t.Attempt > 0 {
		// An attempt counts for the agent's own failure, never for the
		// operator's park: the next launch after unpark is the same attempt.
		edit = func(n *task.Task) { n.Attempt-- }
		text += fmt.Sprintf(" Attempt %d of phase %s is not counted.", t.Attempt, t.Phase)
	}
	if !cm.life.move(ctx, t.ID, token, a, edit, cm.loop.event(t.ID, sessionID, kind, text)) {
		return false
	}
	// A verify gate still running belongs to the session just ended: its
	// result must not move the task when it comes back.
	delete(cm.gating, t.ID)
	if r != nil && !r.stopping {
		cm.life.stopThen(ctx, r, store.SessionKilled, text, nil)
	}
	return true
}

// correct stores the decision first, then, when a live confirmed session
// runs, records its delivery and types it into the pane. The delivery row is
// written before typing: a crash in between loses the live typing (the
// session dies with the console) but never the decision, which every later
// brief renders. So a decision reaches a session at most once, and the task
// always.
func (cm *commands) correct(ctx context.Context, t task.Task, r *run, cmd Command) cmdReply {
	text := strings.TrimSpace(cmd.Text)
	if text == "" {
		return cmdReply{err: errors.New("a correction needs text")}
	}
	if err := CheckCorrection(text, cm.cfg.Limits.CorrectionBytes); err != nil {
		return cmdReply{err: err}
	}
	if t.State.Terminal() {
		return cmdReply{err: fmt.Errorf("task %s has ended (%s); a correction would reach no one", t.ID.Short(), t.State)}
	}
	now := cm.loop.now()
	if cmd.Anchor != nil {
		text = commentText(*cmd.Anchor, text)
	}
	d := store.Decision{ID: task.NewULID(now), TaskID: t.ID, Text: text, Author: authorOf(cmd), At: now, Anchor: cmd.Anchor}
	if cmd.DecisionID != "" {
		if hasDecision(ctx, cm.st, t.ID, cmd.DecisionID) {
			return cmdReply{res: Result{TaskID: t.ID, Message: "already recorded"}}
		}
		d.ID = cmd.DecisionID
	}
	ev := cm.loop.event(t.ID, "", task.EvDecisionRecorded, fmt.Sprintf("Human decision by %s: %s", d.Author, text))
	live := r != nil && r.w != nil && r.confirmed && !r.stopping && !r.finishing
	if live && cmd.DecisionID == "" {
		// Typed into the live pane at once: the decision and its delivery
		// are one write, so the pane waits for one commit, not two.
		del, dl := cm.delivery(r, d)
		if err := cm.st.DecisionDeliver(ctx, d, dl, ev, del); err != nil {
			return cmdReply{err: fmt.Errorf("record decision: %w", err)}
		}
		cm.hub.event(ev)
		cm.hub.event(del)
		return cmdReply{res: Result{TaskID: t.ID, SessionID: r.sessionID, Delivered: true,
			Message: "delivered to session " + short(r.sessionID)}, wait: cm.sendDecision(r, d)}
	}
	if err := cm.st.DecisionInsert(ctx, d, ev); err != nil {
		if cmd.DecisionID != "" && hasDecision(ctx, cm.st, t.ID, cmd.DecisionID) {
			// Another engine on the store recorded it first; it, or
			// the store watch, delivers it.
			return cmdReply{res: Result{TaskID: t.ID, Message: "already recorded"}}
		}
		return cmdReply{err: fmt.Errorf("record decision: %w", err)}
	}
	cm.hub.event(ev)
	res := Result{TaskID: t.ID, Message: "queued for the next brief"}
	if r == nil && cm.foreign[t.ID] && cm.shared {
		// Another engine runs it: that engine hears of the decision
		// through the store and types it into its live session.
		res.Message = "recorded; the engine on " + cm.hostOf(t.ID) + " types it into its live session"
	}
	if !live {
		return cmdReply{res: res}
	}
	done, ok := cm.deliverDecision(ctx, r, d)
	if !ok {
		return cmdReply{res: res}
	}
	res.SessionID, res.Delivered = r.sessionID, true
	res.Message = "delivered to session " + short(r.sessionID)
	return cmdReply{res: res, wait: done}
}

// deliverDecision records d's delivery to r's live session and types it
// into the pane; it reports false, typing nothing, when the delivery could
// not be recorded or d already reached that session. The returned channel
// says when the pane took it.
func (cm *commands) deliverDecision(ctx context.Context, r *run, d store.Decision) (chan error, bool) {
	del, dl := cm.delivery(r, d)
	ok, err := cm.st.DeliveryInsert(ctx, dl, del)
	if err != nil || !ok {
		if err != nil {
			cm.loop.record(ctx, cm.loop.refusal(d.TaskID, r.sessionID, task.ReasonDeliveryFailed, err.Error()))
		}
		return nil, false
	}
	cm.hub.event(del)
	return cm.sendDecision(r, d), true
}

// delivery is d's delivery to r's session now, and its event.
func (cm *commands) delivery(r *run, d store.Decision) (task.Event, store.Delivery) {
	del := cm.loop.event(d.TaskID, r.sessionID, task.EvDecisionDelivered, fmt.Sprintf("Decision delivered to session %s.", short(r.sessionID)))
	return del, store.Delivery{DecisionID: d.ID, SessionID: r.sessionID, At: cm.loop.now()}
}

// sendDecision types d, whose delivery to r's session is recorded, into
// its pane; the returned channel says when the pane took it.
func (cm *commands) sendDecision(r *run, d store.Decision) chan error {
	done := make(chan error, 1)
	in := worker.Input{Kind: worker.InputDecision, ID: d.ID, Text: worker.DecisionText(d.Text), Done: done}
	if r.brief == "" {
		// The brief is being rendered off the loop and may or may not
		// have read this decision: hold it until the brief is handed
		// over, so the session gets it once either way.
		r.held = append(r.held, in)
	} else {
		r.w.Send(in)
	}
	return done
}

func authorOf(cmd Command) string {
	if cmd.Author != "" {
		return cmd.Author
	}
	return "operator"
}

// resolve finds a task by full id or by a unique suffix or prefix, as an
// operator types it.
func (cm *commands) resolve(ref task.ID) (task.ID, error) {
	if _, ok := cm.tasks[ref]; ok {
		return ref, nil
	}
	return ResolveID(cm.ids(), string(ref)) // in creation order, as listed
}

// ResolveID finds the one id among ids that equals ref or ends or starts
// with it (case-insensitive).
func ResolveID(ids []task.ID, ref string) (task.ID, error) {
	typed := strings.TrimSpace(ref)
	ref = strings.ToUpper(typed)
	if ref == "" {
		return "", errors.New("no task given")
	}
	var found []task.ID
	for _, id := range ids {
		s := string(id)
		if s == ref {
			return id, nil
		}
		if strings.HasSuffix(s, ref) || strings.HasPrefix(s, ref) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no task matches %q (`orchestra-tui status` lists them)", typed)
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("%q matches %d tasks; give more of the id (`orchestra-tui status` lists them)", typed, len(found))
	}
}

// addTask validates and stores a new task, queued at its first phase on a
// branch of its own from the current HEAD.
func (cm *commands) addTask(ctx context.Context, t task.Task, src taskSource) (task.Task, error) {
	t, err := Prepare(t, cm.repo, cm.loop.now())
	if err != nil {
		return task.Task{}, err
	}
	if _, ok := cm.cfg.Harness[harnessOf(t)]; !ok {
		return task.Task{}, fmt.Errorf("unknown harness %q (configured: %s)", t.Harness, strings.Join(harnessNames(cm.cfg.Harness), ", "))
	}
	t = cm.key.sign(t)
	ev := cm.loop.event(t.ID, "", task.EvTaskAdded, fmt.Sprintf("Task added: %s (%s, harness %s).", t.Title, t.Pipeline, harnessOf(t)))
	if src.URL != "" {
		ev.Text += " From " + task.PlainLine(src.URL) + "."
	}
	if src.Issue > 0 {
		// issueOf reads it back: the pull request closes the issue.
		ev.Data, _ = json.Marshal(map[string]any{"issue": src.Issue, "url": src.URL})
	}
	if err := cm.st.TaskInsert(ctx, t, ev); err != nil {
		return task.Task{}, fmt.Errorf("store task: %w", err)
	}
	cm.tasks[t.ID] = t
	cm.hub.event(ev)
	return t, nil
}

// harnessNames lists the configured harnesses, sorted.
func harnessNames(hs map[string]session.Spec) []string {
	var out []string
	for n := range hs {
		out = append(out, n)
	}
	sortStrings(out)
	return out
}

// CheckCorrection refuses a correction over limit bytes (0: the default
// limit). A correction is typed into the live pane and rendered into every
// later brief, whose whole budget is a few times this size.
func CheckCorrection(text string, limit int) error {
	if limit <= 0 {
		limit = config.DefaultLimits().CorrectionBytes
	}
	if len(text) > limit {
		return fmt.Errorf("a correction is at most %d bytes and this one is %d: put long instructions in a file in the repository and name it in the correction, or raise limits.correction_bytes in orchestra.toml", limit, len(text))
	}
	return nil
}
