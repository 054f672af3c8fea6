package headless

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// Options tune a headless run.
type Options struct {
	// Format is how events are printed: real ids and times by default.
	Format Format
	// Wait keeps the run going once every task is at rest, for tasks
	// added later, until ctx ends.
	Wait bool
	// OnEvent, if set, sees every event after it is printed; the demo uses
	// it to act at scripted moments. It runs on the printing goroutine.
	OnEvent func(ev task.Event)
	// Skip, if set, leaves out the events it reports true for (OnEvent
	// still sees them). The demo leaves out lease heartbeats, whose number
	// depends on the machine's speed, so two runs print the same text.
	Skip func(ev task.Event) bool
	// Printer, if set, prints the lines instead of a new one on w, so the
	// caller can rename its own text the same way afterwards.
	Printer *Printer
}

// Run starts the coordinator, prints every event, and returns when every
// task is at rest (waiting for review, ended, parked or unplaceable), or,
// with Wait, when ctx ends. It ends with one verdict line per task and
// returns the exit status: 0 only if every task reached a green verdict.
func Run(ctx context.Context, c *coord.Coordinator, w io.Writer, o Options) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	notices, unsub := c.Subscribe()
	defer unsub()
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	p := o.Printer
	if p == nil {
		p = New(w, o.Format)
	}
	for {
		select {
		case err := <-errc:
			if err != nil {
				fmt.Fprintf(w, "orchestra-tui: %v\n", err)
				return 1
			}
			// The coordinator closes every subscription on its way out,
			// after the notices already queued; print those first. If
			// the close was already seen, notices is nil and ranging over
			// it would block forever.
			for n := range drain(notices) {
				if n.Event != nil && (o.Skip == nil || !o.Skip(*n.Event)) {
					p.Print(*n.Event)
				}
			}
			return summary(w, p, c.Snapshot())
		case n, ok := <-notices:
			if !ok {
				notices = nil
				continue
			}
			if n.Event == nil {
				continue
			}
			if o.Skip == nil || !o.Skip(*n.Event) {
				p.Print(*n.Event)
			}
			if o.OnEvent != nil {
				o.OnEvent(*n.Event)
			}
			if s := c.Snapshot(); s.StoreFault != "" || (!o.Wait && AtRest(s)) {
				cancel() // a failed store ends a headless run at once
			}
		}
	}
}

// AtRest reports whether no task can move without a human: each is waiting
// for review, ended, parked, or queued but unplaceable or waiting for its
// harness's program to be installed.
func AtRest(s coord.Snapshot) bool {
	for _, tv := range s.Tasks {
		switch tv.Task.State {
		case task.StateLeased, task.StateRunning, task.StateMergeQueued, task.StateIntegrating:
			return false // the engine moves them (the merge queue the last two)
		case task.StateQueued:
			// A task waiting for its program waits for a human who
			// installs it, as an unplaceable one waits for a new slot.
			if !strings.HasPrefix(tv.Flag, "Unplaceable") && !strings.HasPrefix(tv.Flag, coord.FlagProgramMissing) {
				return false
			}
		}
	}
	return true
}

// summary prints one verdict line per task and returns the exit status.
func summary(w io.Writer, p *Printer, s coord.Snapshot) int {
	if s.StoreFault != "" {
		// Nothing recorded since the failure can be trusted: no verdict
		// line, and never a green exit.
		fmt.Fprintf(w, "orchestra-tui: %s\n", s.StoreFault)
		return 1
	}
	if len(s.Tasks) == 0 {
		if p.format != JSON {
			fmt.Fprintln(w, "no tasks: add one with `orchestra-tui add`")
		}
		return 1
	}
	status := 0
	for _, tv := range s.Tasks {
		line := "· no verdict yet"
		if tv.Verdict != nil {
			line = tv.Verdict.Line()
		}
		green := tv.Verdict != nil && tv.Verdict.Status == verify.StatusOK &&
			(tv.Task.State == task.StateAwaitingReview || tv.Task.State == task.StateCompleted || tv.Task.State == task.StateMerged || tv.Task.State.InMergeQueue())
		if !green {
			status = 1
		}
		switch p.format {
		case JSON:
			fmt.Fprintln(w, p.record(Record{Type: "verdict", Task: tv.Task.ID, State: tv.Task.State, Phase: tv.Task.Phase, Verdict: line, Green: &green}))
		case Stable:
			name := p.name(p.tasks, string(tv.Task.ID), "T")
			fmt.Fprintf(w, "%-4s %-32s %s (%s, phase %s)\n", name, "verdict", Printable(line), tv.Task.State, Printable(string(tv.Task.Phase)))
		default:
			// A task held at rest says why (a program to install, a slot
			// to add): the run ends with it, and this line is the last word.
			why := ""
			if tv.Flag != "" && !green {
				why = " ⚑ " + Printable(tv.Flag)
			}
			fmt.Fprintf(w, "%s %-32s %s (%s, phase %s)%s\n", tv.Task.ID, "verdict", Printable(line), tv.Task.State, Printable(string(tv.Task.Phase)), why)
		}
	}
	return status
}

// drain returns ch, or a closed channel when ch is nil (already seen
// closed), so ranging over the result always ends.
func drain(ch <-chan coord.Notice) <-chan coord.Notice {
	if ch != nil {
		return ch
	}
	done := make(chan coord.Notice)
	close(done)
	return done
}
