package coord

import (
	"context"
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A review comment is a human decision anchored to a line of the task's
// diff: it takes the correction's path (recorded, typed into the live pane
// once, rendered into every later brief) with its location in its text, so
// the agent reads where it applies. Requesting changes sends a task
// awaiting review back to implement, where the next brief holds every open
// comment; resolving one takes it out of later briefs.

// commentText is a comment as the agent reads it: where, the line as it
// was, then what the reviewer said.
func commentText(a store.Anchor, text string) string {
	line := strings.TrimSpace(a.LineText)
	if len(line) > 120 {
		line = line[:120] + "…"
	}
	if line == "" {
		return fmt.Sprintf("Review comment on %s: %s", a.Where(), text)
	}
	return fmt.Sprintf("Review comment on %s (`%s`): %s", a.Where(), line, text)
}

// CommentWords is what the reviewer said in a comment d, without the place
// and the line commentText put before it for the agent: the Diff tab shows
// the comment under that line already.
func CommentWords(d store.Decision) string {
	if d.Anchor == nil {
		return d.Text
	}
	return strings.TrimPrefix(d.Text, commentText(*d.Anchor, ""))
}

// openDecisions drops the resolved ones: they no longer go into briefs.
func openDecisions(ds []store.Decision) []store.Decision {
	out := make([]store.Decision, 0, len(ds))
	for _, d := range ds {
		if d.ResolvedAt.IsZero() {
			out = append(out, d)
		}
	}
	return out
}

// reviews carries out a reviewer's answers to a task awaiting review: the
// changes requested (from the Diff tab's C, or a pull request's review)
// and the comments resolved. It sees the loop (loopView), the task map
// (tasksView), the store, and publish, which tells subscribers of an event
// already in the ledger.
type reviews struct {
	loop    loopView
	tasks   tasksView
	st      store.Store
	publish func(task.Event)
}

// requestChanges sends a task awaiting review back to implement, through
// task.Apply's requeue, with a fresh attempt budget: the reviewer's
// comments are the work, not a failure of the agent.
func (rv reviews) requestChanges(ctx context.Context, t task.Task, cmd Command) cmdReply {
	if t.State != task.StateAwaitingReview && t.State != task.StatePullOpen {
		return cmdReply{err: fmt.Errorf("cannot request changes on task %s: it is %s, not awaiting review", t.ID.Short(), t.State)}
	}
	ds, err := rv.st.DecisionList(ctx, t.ID)
	if err != nil {
		return cmdReply{err: fmt.Errorf("read the comments of task %s: %w", t.ID.Short(), err)}
	}
	open := 0
	for _, d := range openDecisions(ds) {
		if d.Anchor != nil {
			open++
		}
	}
	phase := task.PhaseImplement
	if !t.Pipeline.Has(task.PhaseImplement) {
		phase = t.Phase
	}
	why := fmt.Sprintf("changes requested by %s with %s", authorOf(cmd), plural(open, "open comment", "open comments"))
	ev := rv.loop.event(t.ID, "", task.EvTaskRequeued, fmt.Sprintf("Back to phase %s: %s; no attempt charged.", phase, why))
	if !rv.tasks.move(ctx, t.ID, 0, task.ActRequeue, func(n *task.Task) {
		n.Phase, n.Attempt, n.Reason = phase, 0, why
	}, ev) {
		return cmdReply{err: fmt.Errorf("cannot request changes on task %s: it is %s", t.ID.Short(), rv.tasks.get(t.ID).State)}
	}
	return cmdReply{res: Result{TaskID: t.ID, Message: "back to " + string(phase) + " with " + plural(open, "open comment", "open comments")}}
}

// resolveComment marks the comment cmd.Text names resolved.
func (rv reviews) resolveComment(ctx context.Context, t task.Task, cmd Command) cmdReply {
	id := strings.TrimSpace(cmd.Text)
	ev := rv.loop.event(t.ID, "", task.EvDecisionRecorded, fmt.Sprintf("Comment %s resolved by %s; later briefs leave it out.", short(id), authorOf(cmd)))
	if err := rv.st.DecisionResolve(ctx, t.ID, id, rv.loop.now(), ev); err != nil {
		return cmdReply{err: fmt.Errorf("resolve comment %s: %w", short(id), err)}
	}
	rv.publish(ev)
	return cmdReply{res: Result{TaskID: t.ID, Message: "comment resolved"}}
}
