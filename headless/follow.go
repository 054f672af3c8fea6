package headless

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Until says when a follow ends: after the event ev (nil when the engine's
// state is looked at between events) with s the engine's state.
type Until func(ev *task.Event, s coord.Snapshot) bool

// UntilRest ends a follow once no task can move without a human, as a
// headless run does.
func UntilRest(_ *task.Event, s coord.Snapshot) bool { return AtRest(s) }

// UntilState ends a follow after the first event that brings a task into
// state st (task.awaiting-review for awaiting-review, a requeue for
// queued, and so on).
func UntilState(st task.State) Until {
	return func(ev *task.Event, _ coord.Snapshot) bool {
		if ev == nil {
			return false
		}
		got, ok := StateEntered(ev.Kind)
		return ok && got == st
	}
}

// ParseUntil reads --until: "rest" or a task state.
func ParseUntil(s string) (Until, error) {
	if s == "rest" {
		return UntilRest, nil
	}
	if slices.Contains(task.States, task.State(s)) {
		return UntilState(task.State(s)), nil
	}
	names := []string{"rest"}
	for _, st := range task.States {
		names = append(names, string(st))
	}
	return nil, fmt.Errorf("--until: %q is no state; want one of %s", s, strings.Join(names, ", "))
}

// StateEntered returns the state an event of kind k moves its task into,
// for the kinds that move one.
func StateEntered(k task.Kind) (task.State, bool) {
	switch k {
	case task.EvTaskRequeued, task.EvTaskUnparked, task.EvTaskRetried, task.EvTaskAdded:
		return task.StateQueued, true
	case task.EvSessionConfirmed:
		return task.StateRunning, true
	}
	if s, ok := strings.CutPrefix(string(k), "task."); ok && slices.Contains(task.States, task.State(s)) {
		return task.State(s), true
	}
	return "", false
}

// ErrEngineGone is Follow's error when the engine's connection ended.
var ErrEngineGone = errors.New("the engine stopped")

// followPoll is how often Follow looks at the engine's state between
// events: a snapshot can arrive after the last event it reflects.
const followPoll = 250 * time.Millisecond

// Follow prints the events of a running engine e, as they come, in o's
// format until until says so (nil: until ctx ends) or gone is closed (the
// engine went away: ErrEngineGone). `events --follow` and `run --headless`
// beside a running engine print through it.
func Follow(ctx context.Context, e coord.Engine, gone <-chan struct{}, w io.Writer, o Options, until Until) error {
	notices, unsub := e.Subscribe()
	defer unsub()
	p := o.Printer
	if p == nil {
		p = New(w, o.Format)
	}
	var lastSeq int64
	poll := time.NewTicker(followPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-gone:
			return ErrEngineGone
		case <-poll.C:
			if until != nil && until(nil, e.Snapshot()) {
				return nil
			}
		case n, ok := <-notices:
			if !ok {
				return ErrEngineGone
			}
			if n.Behind {
				return fmt.Errorf("this reader fell more than %d events behind; follow again with --since %d", coord.MaxBacklog, lastSeq)
			}
			if n.Event == nil {
				// A snapshot that came after the last event it reflects
				// (Snapshot, from an engine client) ends the follow as soon
				// as it says so; the poll is for engines that send none.
				if n.Snapshot && until != nil && until(nil, e.Snapshot()) {
					return nil
				}
				continue
			}
			if o.Skip == nil || !o.Skip(*n.Event) {
				p.Print(*n.Event)
			}
			lastSeq = max(lastSeq, n.Event.Seq)
			if o.OnEvent != nil {
				o.OnEvent(*n.Event)
			}
			if until != nil && until(n.Event, e.Snapshot()) {
				return nil
			}
		}
	}
}

// Summary prints one verdict line per task of s, in p's format, and
// returns the exit status of a headless run: 0 only if every task is green.
func Summary(w io.Writer, p *Printer, s coord.Snapshot) int { return summary(w, p, s) }
