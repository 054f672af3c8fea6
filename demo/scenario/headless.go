package scenario

import (
	"context"
	"fmt"
	"io"

	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// RunHeadless runs the scenario without the console: one stable line per
// event, the operator acting on events as they are printed, then the
// proofs and the list of pane recordings. It returns the exit status: 0
// only when the run ended green and every proof held. Interrupted (parent
// ended), it prints no proofs and returns 1.
func RunHeadless(parent context.Context, s *Scenario, w io.Writer) int {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	op := s.NewOperator()
	stalls := s.newStallClock()
	added := make(chan error, 1)
	go func() {
		_, err := s.AddTask(ctx)
		if err != nil {
			cancel() // nothing will happen: do not wait for it
		}
		added <- err
	}()
	p := headless.New(w, headless.Stable)
	var actErr error
	code := headless.Run(ctx, s.Opened.Coordinator, w, headless.Options{Printer: p, Skip: Heartbeat, OnEvent: func(ev task.Event) {
		for _, a := range op.On(ev) {
			if err := s.WaitPane(ctx, op.TaskID(), a.When); err != nil && actErr == nil {
				actErr = fmt.Errorf("the operator's %s: %w", a.Kind, err)
			}
			s.pause(ctx)
			// The coordinator loop answers commands between iterations
			// and queues its events without bound, so waiting here holds
			// up only the printing.
			if _, err := s.Opened.Do(ctx, a.Command(op.TaskID())); err != nil && actErr == nil {
				actErr = fmt.Errorf("the operator's %s: %w", a.Kind, err)
			}
		}
		stalls.on(ctx, op, ev)
	}})
	err := <-added
	if parent.Err() != nil {
		// Interrupted: the beats did not all happen, and that is no
		// failure to report; the caller says the demo was interrupted.
		return 1
	}
	if err != nil {
		fmt.Fprintf(w, "FAILED: %v\n", err)
		return 1
	}
	return s.Finish(ctx, w, p, op, code, actErr)
}

// Heartbeat reports whether an event is a lease heartbeat: a renewal, or a
// renewal refused for want of progress. How many there are depends on how
// fast the machine runs the agent, so the demo's text leaves them out; the
// expiry that matters is printed, and the console shows them all.
func Heartbeat(ev task.Event) bool {
	return ev.Kind == task.EvLeaseRenewed || (ev.Kind == task.EvRefusal && ev.Reason == task.ReasonRenewalNoProgress)
}
