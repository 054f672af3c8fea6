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

	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// lifecycle is the run lifecycle: a task's moves through task.Apply in the
// store's transaction, and a run's end (stop, continuity, the session row,
// requeue, failure, dead ends). Every other service moves tasks and ends
// runs through it; it sees the loop's task map and run table, never the
// coordinator.
type lifecycle struct {
	loop      loopView
	st        store.Store
	cfg       config.Config
	stopGrace time.Duration
	hub       *hub
	usage     *usageBook
	// The loop's maps: the tasks, the runs, the verdicts; live is the
	// handles Pane and Input read from other goroutines.
	tasks    map[task.ID]task.Task
	runs     map[task.ID]*run
	verdicts map[task.ID]*verify.Verdict
	live     *sync.Map
	// holdWrite holds a session row's write through a store outage
	// (holdSessionWrite).
	holdWrite func(err error, again func()) bool
	// holdMove holds a task's move that a network store did not answer
	// until it does, the strand check leaving the task alone meanwhile
	// (holdTaskMove), and reports true; a refusal is not held.
	holdMove func(err error, id task.ID, again func()) bool
	// holdBehind holds a task's move while the store watch holds fenced
	// appends of that task through an outage, until they are written
	// (holdBehindAppends), and reports true.
	holdBehind func(id task.ID, again func()) bool
}

// stopThen stops r's session off the loop, capturing continuity first, and
// then, back on the loop, ends the run and calls then.
func (lc *lifecycle) stopThen(ctx context.Context, r *run, status store.SessionStatus, why string, then func()) {
	r.stopping = true
	r.signalled = r.w != nil
	base := lc.continuityBase(r, why)
	w := r.w
	lc.loop.async(func() func() {
		var cont *brief.Continuity
		if w != nil {
			cc := lc.captureContinuity(r, base)
			cont = &cc
			_ = w.Stop(lc.stopGrace)
		}
		return func() {
			code := 0
			if w != nil {
				code = w.ExitCode()
			}
			lc.endRunWith(ctx, r, status, code, cont, why)
			if then != nil {
				then()
			}
		}
	})
}

// continuityBase holds the loop-owned parts of a continuity record.
func (lc *lifecycle) continuityBase(r *run, ended string) brief.Continuity {
	verdict := ""
	if v := lc.verdicts[r.taskID]; v != nil {
		verdict = v.Line()
	}
	return brief.Continuity{
		SessionID: r.sessionID, Harness: harnessOf(lc.tasks[r.taskID]), Model: lc.tasks[r.taskID].Model,
		Attempt: r.attempt, Phase: r.phase, Ended: ended,
		Errors: r.errorList(), Verdict: verdict,
	}
}

// captureContinuity adds what only the worktree and the screen know. It does
// IO, so it runs off the loop.
func (lc *lifecycle) captureContinuity(r *run, cont brief.Continuity) brief.Continuity {
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
func (lc *lifecycle) endRun(ctx context.Context, r *run, status store.SessionStatus, why string) {
	lc.endRunWith(ctx, r, status, 0, nil, why)
}

// endRunWith forgets the run, frees its slot and records how the session
// ended, with its continuity when there is one.
func (lc *lifecycle) endRunWith(ctx context.Context, r *run, status store.SessionStatus, code int, cont *brief.Continuity, why string) {
	lc.usage.finish(ctx, r)
	if lc.runs[r.taskID] == r {
		delete(lc.runs, r.taskID)
		lc.live.Delete(r.taskID)
		r.slot.busy--
	}
	if r.unsub != nil {
		r.unsub()
		r.unsub = nil
	}
	// When it ended, also for a write held through an outage.
	ended := lc.loop.now()
	lc.updateSession(ctx, r, func(s *store.Session) {
		s.Status, s.ExitCode, s.EndedAt = status, code, ended
		if cont != nil {
			if b, err := json.Marshal(cont); err == nil {
				s.Continuity = string(b)
			}
		}
	})
	// An agent's own exit says its code ("exited (exit 1)"), even when the
	// loop is stopping the run after it (a crash, a limit); the engine's
	// stop says so, and that the signal in the status is its own, not the
	// agent hanging up or failing.
	how := fmt.Sprintf("%s (%s)", status, ExitText(code))
	if r.signalled {
		how = "was stopped by the engine (" + StopText(code) + ")"
	}
	lc.loop.record(ctx, lc.loop.event(r.taskID, r.sessionID, task.EvSessionExited,
		fmt.Sprintf("Session %s %s: %s", short(r.sessionID), how, why)))
}

// StopText says how a process the engine stopped ended: the engine's
// signal first when the exit code is a shell's 128+N ("SIGHUP, exit 129"),
// else the code the agent exited with on its way out ("exit 0").
func StopText(code int) string {
	name := ""
	switch syscall.Signal(code - 128) {
	case syscall.SIGHUP: // session.Stop sends it first, as a closing terminal does
		name = "SIGHUP"
	case syscall.SIGTERM: // then this, past a moment
		name = "SIGTERM"
	case syscall.SIGKILL: // and this past the grace
		name = "SIGKILL"
	case syscall.SIGINT:
		name = "SIGINT"
	default:
		return ExitText(code)
	}
	return fmt.Sprintf("%s, exit %d", name, code)
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
func (lc *lifecycle) move(ctx context.Context, id task.ID, token int64, a task.Action, edit func(*task.Task), ev task.Event) bool {
	t := lc.tasks[id]
	if _, err := task.Apply(t.State, a); err != nil {
		lc.loop.record(ctx, lc.loop.refusal(id, ev.SessionID, task.ReasonIllegalTransition, err.Error()))
		return false
	}
	return lc.transition(ctx, store.Move(id, t.State, a, token, lc.loop.now(), edit, ev), ev)
}

// transition writes p, whose events are ev, and takes the task as written
// into the loop's view; a refusal is recorded and the view reread.
func (lc *lifecycle) transition(ctx context.Context, p store.TaskTransitionParams, ev task.Event) bool {
	if lc.holdBehind(p.TaskID, func() { lc.transition(ctx, p, ev) }) {
		// An append of the task's, fenced by the lease this move may
		// release, waits for the store (an outage's first write failed
		// while the next, the move, found the store back): written after
		// the move it would be refused as stale and lost (the fault run:
		// a pushed branch with no branch.pushed event). So the move waits
		// behind it, in order.
		return false
	}
	res, err := lc.st.TaskTransition(ctx, p)
	if err != nil && lc.holdMove(err, p.TaskID, func() { lc.transition(ctx, p, ev) }) {
		// A network store that does not answer (the fault run: a pg_ctl
		// restart as a green gate's task moved to review left it running,
		// its lease held, for good). The move is no refusal: it is made
		// once the store answers (outage.go), fenced as ever; a move that
		// did land, its answer lost, is then refused as a conflict and the
		// view reread.
		return false
	}
	if err != nil {
		reason := task.ReasonIllegalTransition
		if errors.Is(err, store.ErrStaleToken) || errors.Is(err, store.ErrConflict) {
			reason = task.ReasonStaleLeaseToken
		}
		lc.loop.record(ctx, lc.loop.refusal(p.TaskID, ev.SessionID, reason, err.Error()))
		lc.reloadTask(ctx, p.TaskID)
		return false
	}
	lc.tasks[p.TaskID] = res.Task
	lc.hub.event(ev)
	lc.loop.poke()
	return true
}

// requeue puts the task back in the queue after r ended. When countAttempt
// is set and the phase has used its attempts, the task fails instead.
func (lc *lifecycle) requeue(ctx context.Context, r *run, reason task.Reason, text string, countAttempt bool) {
	t := lc.tasks[r.taskID]
	if !t.State.Live() {
		return
	}
	if countAttempt && t.Attempt >= lc.cfg.Lease.MaxAttempts {
		lc.fail(ctx, t, r.token, task.ReasonAttemptsExhausted,
			fmt.Sprintf("Phase %s failed %d times; last: %s", t.Phase, t.Attempt, text))
		return
	}
	ev := lc.loop.event(r.taskID, r.sessionID, task.EvTaskRequeued,
		fmt.Sprintf("Requeued for phase %s after attempt %d: %s", t.Phase, t.Attempt, text))
	ev.Reason = reason
	lc.move(ctx, r.taskID, r.token, task.ActRequeue, func(n *task.Task) {
		n.Reason = string(reason)
		if !countAttempt && n.Attempt > 0 {
			n.Attempt--
		}
	}, ev)
}

// fail ends the task for good, with the reason.
func (lc *lifecycle) fail(ctx context.Context, t task.Task, token int64, reason task.Reason, detail string) {
	ev := lc.loop.event(t.ID, "", task.EvTaskFailed, reason.Sentence()+" "+detail)
	ev.Reason = reason
	lc.move(ctx, t.ID, token, task.ActFail, func(n *task.Task) { n.Reason = string(reason) }, ev)
}

// deadEnd records an approach that ended in a known failure.
func (lc *lifecycle) deadEnd(ctx context.Context, r *run, text string) {
	d := store.DeadEnd{TaskID: r.taskID, Phase: r.phase, Attempt: r.attempt, Text: text, At: lc.loop.now()}
	ev := lc.loop.event(r.taskID, r.sessionID, task.EvDeadEnd, "Dead end recorded: "+text)
	if err := lc.st.DeadEndInsert(ctx, d, ev); err != nil {
		lc.loop.record(ctx, lc.loop.refusal(r.taskID, r.sessionID, task.ReasonIllegalTransition, "Dead end: "+err.Error()))
		return
	}
	lc.hub.event(ev)
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

// reloadTask rereads a task from the store into the loop's view.
func (lc *lifecycle) reloadTask(ctx context.Context, id task.ID) {
	if t, err := lc.st.TaskGet(ctx, id); err == nil {
		lc.tasks[id] = t
	}
}

// updateSession edits the session row of r, fenced by its lease token.
func (lc *lifecycle) updateSession(ctx context.Context, r *run, f func(*store.Session)) {
	again := func() { lc.updateSession(ctx, r, f) }
	s, err := lc.st.SessionGet(ctx, r.sessionID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			lc.holdWrite(err, again)
		}
		return
	}
	f(&s)
	s.Fence = r.token
	if err := lc.st.SessionUpdate(ctx, s); errors.Is(err, store.ErrStaleToken) {
		return // another engine holds the task: its rescue marked the row
	} else if err != nil && !lc.holdWrite(err, again) {
		lc.loop.record(ctx, lc.loop.refusal(r.taskID, r.sessionID, task.ReasonIllegalTransition, "Session record: "+err.Error()))
	}
}
