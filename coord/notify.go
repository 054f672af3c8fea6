package coord

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/notify"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// notify runs the `[notify] command` for an event that means a task needs
// a human, off the loop; a failure is recorded on the task, so the operator
// learns the alert did not go out. It runs in the engine, so the command
// fires whether or not a console is attached. The console rings its own
// bell (package ui). The same news about the same session within
// notify.DebounceWindow runs it once: a pane stuck three times in a minute
// is one alert.
func (c *Coordinator) notify(ev task.Event) {
	argv := c.cfg.Notify.Command
	if len(argv) == 0 {
		return
	}
	n, ok := notify.For(ev)
	if !ok {
		return
	}
	if c.notified.d == nil {
		c.notified.d = notify.NewDebouncer(notify.DebounceWindow)
	}
	if !c.notified.d.Allow(n, c.now()) {
		return // the operator was just told this about this session
	}
	n.Title = c.tasks[ev.TaskID].Title
	dir, environ := c.p.Repo.Root, c.p.Environ
	// The command is not cut short by the loop stopping (it has its own
	// timeout): an alert for the last event of a run still goes out.
	ctx := context.Background()
	if c.io != nil {
		ctx = context.WithoutCancel(c.io)
	}
	c.async(func() func() {
		err := notify.Run(ctx, argv, dir, environ, n)
		if err == nil {
			return nil
		}
		return func() {
			c.record(ctx, c.event(ev.TaskID, ev.SessionID, task.EvNotifyFailed, "The notify command failed: "+err.Error()))
		}
	})
}

// notified is the coordinator's memory of the alerts it sent, made on the
// first one.
type notified struct{ d *notify.Debouncer }
