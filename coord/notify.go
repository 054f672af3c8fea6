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
func (n *notifier) notify(ev task.Event) {
	argv := n.argv
	if len(argv) == 0 {
		return
	}
	note, ok := notify.For(ev)
	if !ok {
		return
	}
	if n.d == nil {
		n.d = notify.NewDebouncer(notify.DebounceWindow)
	}
	if !n.d.Allow(note, n.loop.now()) {
		return // the operator was just told this about this session
	}
	note.Title = n.title(ev.TaskID)
	dir, environ := n.dir, n.environ
	// The command is not cut short by the loop stopping (it has its own
	// timeout): an alert for the last event of a run still goes out.
	ctx := context.Background()
	if io := n.loop.io(); io != nil {
		ctx = context.WithoutCancel(io)
	}
	n.loop.async(func() func() {
		err := notify.Run(ctx, argv, dir, environ, note)
		if err == nil {
			return nil
		}
		return func() {
			n.loop.record(ctx, n.loop.event(ev.TaskID, ev.SessionID, task.EvNotifyFailed, "The notify command failed: "+err.Error()))
		}
	})
}

// notifier runs the [notify] command; d is its memory of the alerts it
// sent, made on the first one. It sees the loop (loopView), the command,
// the directory and environment it runs in, and the tasks' titles.
type notifier struct {
	d *notify.Debouncer

	loop    loopView
	argv    []string
	dir     string
	environ []string
	// title is the task's title; on the loop.
	title func(task.ID) string
}
