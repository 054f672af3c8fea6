package scenario

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// clock is the engine's clock in a demo: the wall clock plus how far the
// demo moved it on. Only a fast headless run with the scripted agent moves
// it (see stallClock); everywhere else it is the wall clock.
type clock struct{ offset atomic.Int64 }

// Now is the engine's time.
func (c *clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// advance moves the clock on by d.
func (c *clock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// stallClock moves the engine's clock over the demo's two stalls instead of
// waiting them out on the wall clock, so a fast headless run takes seconds
// and prints the same text on a quiet and a busy machine: what the stalls
// show (stuck, lease expired) depends on the stuck and lease clocks, not on
// how fast the machine runs the agent. Each beat waits for the pane to be
// still first, so the clock moves over a stall, never over work; a move
// that comes early only means the wall clock finishes the wait.
type stallClock struct {
	s       *Scenario
	stuck   time.Duration
	enabled bool
}

// quietFor is how long a pane must not change before the clock moves over
// its stall.
const quietFor = 300 * time.Millisecond

// beatMargin is how far past a deadline the clock is moved: past it, and
// well inside the second the printed figures round to.
const beatMargin = 150 * time.Millisecond

// newStallClock returns the scenario's stallClock, enabled only for a fast run of
// the scripted agent, whose stalls the script fixes.
func (s *Scenario) newStallClock() *stallClock {
	return &stallClock{s: s, stuck: s.pace.stuck, enabled: s.opts.Fast && s.opts.Harness.Name == Scripted().Name}
}

// on looks at one event (after the operator has acted on it) and moves the
// clock when it starts a stall:
//
//   - research's first brief, which the agent ignores → past stuck.after;
//   - the decision delivered to implement attempt 1, after which the agent
//     goes silent → past stuck.after;
//   - implement attempt 1 flagged stuck → past its lease's deadline.
func (b *stallClock) on(ctx context.Context, op *Operator, ev task.Event) {
	if !b.enabled || ev.TaskID != op.TaskID() {
		return
	}
	switch {
	case ev.Kind == task.EvBriefDelivered && op.inPhase(task.PhaseResearch) && !op.resubmitted,
		ev.Kind == task.EvDecisionDelivered && op.inPhase(task.PhaseImplement):
		if b.s.waitQuiet(ctx, ev.TaskID) {
			b.s.clock.advance(b.stuck + beatMargin - quietFor)
		}
	case ev.Kind == task.EvRefusal && ev.Reason == task.ReasonStuck && op.inPhase(task.PhaseImplement):
		if l := op.lease(); l != nil {
			if d := l.Deadline.Sub(b.s.clock.Now()); d > 0 {
				b.s.clock.advance(d + beatMargin)
			}
		}
	}
}

// waitQuiet waits until the task's pane has not changed for quietFor, on
// the engine's pane notices; false when ctx ends or after paneWait first.
func (s *Scenario) waitQuiet(ctx context.Context, id task.ID) bool {
	ctx, cancel := context.WithTimeout(ctx, paneWait)
	defer cancel()
	notices, stop := s.Opened.Subscribe()
	defer stop()
	t := time.NewTimer(quietFor)
	defer t.Stop()
	for {
		select {
		case n, open := <-notices:
			if !open {
				return false
			}
			if n.Pane == id {
				t.Reset(quietFor)
			}
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// lease is the task's lease now, nil if it holds none.
func (op *Operator) lease() *coord.LeaseView {
	for _, tv := range op.engine.Snapshot().Tasks {
		if tv.Task.ID == op.taskID {
			return tv.Lease
		}
	}
	return nil
}
