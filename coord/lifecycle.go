package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// stopThen stops r's session off the loop, capturing continuity first, and
// then, back on the loop, ends the run and calls then.
func (c *Coordinator) stopThen(ctx context.Context, r *run, status store.SessionStatus, why string, then func()) {
	r.stopping = true
	base := c.continuityBase(r, why)
	w := r.w
	c.async(func() func() {
		var cont *brief.Continuity
		if w != nil {
			cc := c.captureContinuity(r, base)
			cont = &cc
			_ = w.Stop(c.p.StopGrace)
		}
		return func() {
			code := 0
			if w != nil {
				code = w.ExitCode()
			}
			c.endRunWith(ctx, r, status, code, cont, why)
			if then != nil {
				then()
			}
		}
	})
}

// continuityBase holds the loop-owned parts of a continuity record.
func (c *Coordinator) continuityBase(r *run, ended string) brief.Continuity {
	verdict := ""
	if v := c.verdicts[r.taskID]; v != nil {
		verdict = v.Line()
	}
	return brief.Continuity{
		SessionID: r.sessionID, Harness: harnessOf(c.tasks[r.taskID]), Model: c.tasks[r.taskID].Model,
		Attempt: r.attempt, Phase: r.phase, Ended: ended,
		Errors: r.errorList(), Verdict: verdict,
	}
}

// captureContinuity adds what only the worktree and the screen know. It does
// IO, so it runs off the loop.
func (c *Coordinator) captureContinuity(r *run, cont brief.Continuity) brief.Continuity {
	if r.w != nil {
		cont.Screen = trimScreen(r.w.View().Text())
	}
	if r.dir != "" {
		if files, err := repo.Changed(r.dir, r.base); err == nil {
			cont.FilesChanged = files
		}
		matches, _ := filepath.Glob(filepath.Join(r.dir, task.StateDir, "*.json"))
		for _, m := range matches {
			cont.Artifacts = append(cont.Artifacts, task.StateDir+"/"+filepath.Base(m))
		}
		sort.Strings(cont.Artifacts)
	}
	return cont
}

func trimScreen(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// endRun ends a run without continuity.
func (c *Coordinator) endRun(ctx context.Context, r *run, status store.SessionStatus, why string) {
	c.endRunWith(ctx, r, status, 0, nil, why)
}

// endRunWith forgets the run, frees its slot and records how the session
// ended, with its continuity when there is one.
func (c *Coordinator) endRunWith(ctx context.Context, r *run, status store.SessionStatus, code int, cont *brief.Continuity, why string) {
	c.usage.finish(ctx, r)
	if c.runs[r.taskID] == r {
		delete(c.runs, r.taskID)
		c.live.Delete(r.taskID)
		r.slot.busy--
	}
	if r.unsub != nil {
		r.unsub()
		r.unsub = nil
	}
	// When it ended, also for a write held through an outage.
	ended := c.now()
	c.updateSession(ctx, r, func(s *store.Session) {
		s.Status, s.ExitCode, s.EndedAt = status, code, ended
		if cont != nil {
			if b, err := json.Marshal(cont); err == nil {
				s.Continuity = string(b)
			}
		}
	})
	verb := string(status)
	if r.stopping && status == store.SessionExited {
		verb = "was stopped" // by us: its exit status is our signal, not a failure
	}
	c.record(ctx, c.event(r.taskID, r.sessionID, task.EvSessionExited,
		fmt.Sprintf("Session %s %s (%s): %s", short(r.sessionID), verb, ExitText(code), why)))
}

// ExitText says how a process ended: its exit code, and the signal that
// ended it when the code is a shell's 128+N.
func ExitText(code int) string {
	if code > 128 && code < 128+65 {
		return fmt.Sprintf("exit %d, %s", code, syscall.Signal(code-128))
	}
	return fmt.Sprintf("exit %d", code)
}

// move applies action a to the task, fenced by the lease token, in the
// store's one transition (which releases the lease when the task leaves
// the live states). It returns false when the store refused the write.
func (c *Coordinator) move(ctx context.Context, id task.ID, token int64, a task.Action, edit func(*task.Task), ev task.Event) bool {
	t := c.tasks[id]
	if _, err := task.Apply(t.State, a); err != nil {
		c.record(ctx, c.refusalEvent(id, ev.SessionID, task.ReasonIllegalTransition, err.Error()))
		return false
	}
	return c.transition(ctx, store.Move(id, t.State, a, token, c.now(), edit, ev), ev)
}

// transition writes p, whose events are ev, and takes the task as written
// into the loop's view; a refusal is recorded and the view reread.
func (c *Coordinator) transition(ctx context.Context, p store.TaskTransitionParams, ev task.Event) bool {
	res, err := c.st.TaskTransition(ctx, p)
	if err != nil && storeUnreachable(c, err) {
		// A network store that does not answer (the fault run: a pg_ctl
		// restart as a green gate's task moved to review left it running,
		// its lease held, for good). The move is no refusal: it is made
		// once the store answers (outage.go), fenced as ever; a move that
		// did land, its answer lost, is then refused as a conflict and the
		// view reread.
		c.writeFailed(err)
		if c.sw.moving == nil {
			c.sw.moving = map[task.ID]bool{}
		}
		c.sw.moving[p.TaskID] = true
		holdUntilBack(c, func() {
			delete(c.sw.moving, p.TaskID)
			c.transition(ctx, p, ev)
		})
		return false
	}
	if err != nil {
		reason := task.ReasonIllegalTransition
		if errors.Is(err, store.ErrStaleToken) || errors.Is(err, store.ErrConflict) {
			reason = task.ReasonStaleLeaseToken
		}
		c.record(ctx, c.refusalEvent(p.TaskID, ev.SessionID, reason, err.Error()))
		c.reloadTask(ctx, p.TaskID)
		return false
	}
	c.tasks[p.TaskID] = res.Task
	c.hub.event(ev)
	c.poke()
	return true
}

// requeue puts the task back in the queue after r ended. When countAttempt
// is set and the phase has used its attempts, the task fails instead.
func (c *Coordinator) requeue(ctx context.Context, r *run, reason task.Reason, text string, countAttempt bool) {
	t := c.tasks[r.taskID]
	if !t.State.Live() {
		return
	}
	if countAttempt && t.Attempt >= c.cfg.Lease.MaxAttempts {
		c.fail(ctx, t, r.token, task.ReasonAttemptsExhausted,
			fmt.Sprintf("Phase %s failed %d times; last: %s", t.Phase, t.Attempt, text))
		return
	}
	ev := c.event(r.taskID, r.sessionID, task.EvTaskRequeued,
		fmt.Sprintf("Requeued for phase %s after attempt %d: %s", t.Phase, t.Attempt, text))
	ev.Reason = reason
	c.move(ctx, r.taskID, r.token, task.ActRequeue, func(n *task.Task) {
		n.Reason = string(reason)
		if !countAttempt && n.Attempt > 0 {
			n.Attempt--
		}
	}, ev)
}

// fail ends the task for good, with the reason.
func (c *Coordinator) fail(ctx context.Context, t task.Task, token int64, reason task.Reason, detail string) {
	ev := c.event(t.ID, "", task.EvTaskFailed, reason.Sentence()+" "+detail)
	ev.Reason = reason
	c.move(ctx, t.ID, token, task.ActFail, func(n *task.Task) { n.Reason = string(reason) }, ev)
}

// deadEnd records an approach that ended in a known failure.
func (c *Coordinator) deadEnd(ctx context.Context, r *run, text string) {
	d := store.DeadEnd{TaskID: r.taskID, Phase: r.phase, Attempt: r.attempt, Text: text, At: c.now()}
	ev := c.event(r.taskID, r.sessionID, task.EvDeadEnd, "Dead end recorded: "+text)
	if err := c.st.DeadEndInsert(ctx, d, ev); err != nil {
		c.record(ctx, c.refusalEvent(r.taskID, r.sessionID, task.ReasonIllegalTransition, "Dead end: "+err.Error()))
		return
	}
	c.hub.event(ev)
}

// maxRunErrors bounds a run's error list. An agent can be refused many
// times in one attempt (an artifact rewritten wrong in a loop); the list
// lives in memory, in the session's continuity and in the next brief.
const maxRunErrors = 20

// addError records one refusal or error sentence of r's attempt, keeping
// the newest maxRunErrors-1 and counting the ones dropped.
func (r *run) addError(s string) {
	r.errors = append(r.errors, s)
	if over := len(r.errors) - (maxRunErrors - 1); over > 0 {
		r.dropped += over
		r.errors = append(r.errors[:0:0], r.errors[over:]...)
	}
}

// errorList returns r's errors for continuity: a first line saying how many
// earlier ones were dropped, if any, then the newest, in order.
func (r *run) errorList() []string {
	out := make([]string, 0, len(r.errors)+1)
	if r.dropped > 0 {
		out = append(out, fmt.Sprintf("(%d earlier errors of this attempt are not shown)", r.dropped))
	}
	return append(out, r.errors...)
}
