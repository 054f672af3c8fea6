package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// OperatorName is the author the demo's operator gives its commands.
const OperatorName = "demo-operator"

// Act is one thing the demo's operator does.
type Act struct {
	Kind coord.CommandKind // coord.CmdResubmit, coord.CmdCorrect or coord.CmdApprove
	Text string            // the correction's text
	// When, if set, is text the task's live pane must show before the act:
	// the operator reads the pane before typing into it.
	When string
}

// ThinkingMarker is what the scripted agent's pane shows while it thinks;
// the operator types the correction once the implement pane shows it, so
// the correction lands after the agent's opening lines on every run.
const ThinkingMarker = "Thinking…"

// Operator is the demo's scripted human. It reads the coordinator's events
// in order and answers some of them; it never acts on a timer. It is not
// safe for concurrent use: feed it from one goroutine.
type Operator struct {
	engine interface{ Snapshot() coord.Snapshot }
	// correctWhen is what the pane shows when the correction is typed.
	correctWhen string
	// unscripted: no script drives the model, so nothing is forced.
	unscripted bool

	taskID      task.ID
	resubmitted bool
	corrected   bool
	approved    bool
	done        bool
}

// NewOperator returns the operator for this scenario's coordinator.
func (s *Scenario) NewOperator() *Operator {
	when := s.opts.Harness.CorrectWhen
	if when == "" {
		when = ThinkingMarker
	}
	return &Operator{engine: s.Opened.Coordinator, correctWhen: when, unscripted: s.opts.Harness.Unscripted}
}

// AddTask adds the demo task through the coordinator's command path, as an
// operator would; it waits until the coordinator runs.
func (s *Scenario) AddTask(ctx context.Context) (task.ID, error) {
	res, err := s.Opened.Do(ctx, coord.Command{Kind: coord.CmdAdd, Task: s.NewTask(), Author: OperatorName})
	if err != nil {
		return "", fmt.Errorf("add the demo task: %w", err)
	}
	return res.TaskID, nil
}

// On looks at one event and returns what the operator does about it:
//
//   - the research pane is flagged stuck → resubmit it (once);
//   - implement attempt 1 got its brief → type the correction (once);
//   - the task awaits review → approve it (once).
//
// With an unscripted model (the real service) nothing happens on cue, so
// the operator resubmits whichever pane is flagged stuck, types no
// correction, and approves.
// Done reports, after On, whether the scenario has ended.
func (op *Operator) On(ev task.Event) []Act {
	if op.taskID == "" && ev.Kind == task.EvTaskAdded {
		op.taskID = ev.TaskID
	}
	if ev.TaskID != op.taskID {
		return nil
	}
	switch {
	case ev.Kind == task.EvRefusal && ev.Reason == task.ReasonStuck && op.unscripted:
		return []Act{{Kind: coord.CmdResubmit}}
	case ev.Kind == task.EvRefusal && ev.Reason == task.ReasonStuck && !op.resubmitted && op.inPhase(task.PhaseResearch):
		// Only the research pane is meant to stall; a slow moment
		// elsewhere that trips the stuck clock is left to the lease.
		op.resubmitted = true
		return []Act{{Kind: coord.CmdResubmit}}
	case ev.Kind == task.EvBriefDelivered && !op.unscripted && !op.corrected && op.isImplementAttempt1(ev.SessionID):
		op.corrected = true
		return []Act{{Kind: coord.CmdCorrect, Text: Correction, When: op.correctWhen}}
	case ev.Kind == task.EvTaskAwaiting && !op.approved:
		op.approved = true
		return []Act{{Kind: coord.CmdApprove}}
	case ev.Kind == task.EvTaskCompleted || ev.Kind == task.EvTaskFailed || ev.Kind == task.EvTaskCancelled:
		op.done = true
	}
	return nil
}

// Done reports whether the task has ended, so the operator has nothing
// left to do.
func (op *Operator) Done() bool { return op.done }

// TaskID is the demo task, once its task.added event was seen.
func (op *Operator) TaskID() task.ID { return op.taskID }

// isImplementAttempt1 reports whether the session is the task's first
// implement attempt. The coordinator publishes an event after the snapshot
// it led to, so the snapshot read now is at least that fresh.
func (op *Operator) isImplementAttempt1(sessionID string) bool {
	for _, tv := range op.engine.Snapshot().Tasks {
		if tv.Task.ID == op.taskID {
			return tv.SessionID == sessionID && tv.Task.Phase == task.PhaseImplement && tv.Task.Attempt == 1
		}
	}
	return false
}

// inState reports whether the task is in state st now.
func (op *Operator) inState(st task.State) bool {
	for _, tv := range op.engine.Snapshot().Tasks {
		if tv.Task.ID == op.taskID {
			return tv.Task.State == st
		}
	}
	return false
}

// inPhase reports whether the task is in phase p now.
func (op *Operator) inPhase(p task.Phase) bool {
	for _, tv := range op.engine.Snapshot().Tasks {
		if tv.Task.ID == op.taskID {
			return tv.Task.Phase == p
		}
	}
	return false
}

// WaitPane waits until the task's live pane shows want, on the engine's
// pane notices; it gives up when ctx ends or after paneWait.
func (s *Scenario) WaitPane(ctx context.Context, id task.ID, want string) error {
	if want == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, paneWait)
	defer cancel()
	notices, stop := s.Opened.Subscribe()
	defer stop()
	shows := func() bool {
		v, ok := s.Opened.Pane(id)
		return ok && strings.Contains(v.Text(), want)
	}
	for !shows() {
		select {
		case _, open := <-notices:
			if !open {
				return fmt.Errorf("the console stopped before the pane showed %q", want)
			}
		case <-ctx.Done():
			return fmt.Errorf("the pane never showed %q: %w", want, ctx.Err())
		}
	}
	return nil
}

// paneWait bounds how long the operator waits to see something on a pane:
// longer than any agent's lease in the demo (opencode, behind its spinner,
// took over 20 s between two requests on a loaded machine), so the
// operator never gives up on a pane whose session still holds its lease.
const paneWait = 2 * time.Minute

// Command is the coordinator command for an act on the task.
func (a Act) Command(id task.ID) coord.Command {
	return coord.Command{Kind: a.Kind, TaskID: id, Text: a.Text, Author: OperatorName}
}
