package coord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// running is a coordinator a test runs and the notices it has read: what
// the real bundle (scripted agents in real ptys, setup) and the fake one
// (workertest fakes in a synctest bubble, setupFake) share.
type running struct {
	c       *Coordinator
	cancel  context.CancelFunc
	notices <-chan Notice
	// events are the ledger events read so far, in order.
	events []task.Event
	// began is when the first coordinator started: dump dates events from
	// it.
	began time.Time
	// ended gives what Run returned.
	ended chan error
}

// run starts c and follows its notices from now on; c stops when the test
// ends, if stop has not stopped it first.
func (r *running) run(t testing.TB, c *Coordinator) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	notices, unsub := c.Subscribe()
	r.c, r.notices, r.cancel = c, notices, cancel
	if r.began.IsZero() {
		r.began = time.Now()
	}
	ended := make(chan error, 1)
	r.ended = ended
	go func() { ended <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-c.Done()
		unsub()
	})
}

// stop ends the coordinator and waits until it has.
func (r *running) stop() {
	r.cancel()
	<-r.c.Done()
}

// next reads notices, recording events, until ok holds for one, which it
// returns; false when guard fires first. Closed notices fail the test.
func (r *running) next(t testing.TB, guard <-chan time.Time, ok func(Notice) bool) (Notice, bool) {
	t.Helper()
	for {
		select {
		case n, open := <-r.notices:
			if !open {
				t.Fatalf("notices closed; events so far:\n%s", r.dump())
			}
			if n.Event != nil {
				r.events = append(r.events, *n.Event)
			}
			if ok(n) {
				return n, true
			}
		case <-guard:
			return Notice{}, false
		}
	}
}

// waitEvent reads notices until an event satisfies ok, failing the test
// with the events seen when d passes first (on the bubble's clock in a
// synctest test).
func (r *running) waitEvent(t testing.TB, d time.Duration, ok func(task.Event) bool) task.Event {
	t.Helper()
	guard := time.NewTimer(d)
	defer guard.Stop()
	n, found := r.next(t, guard.C, func(n Notice) bool { return n.Event != nil && ok(*n.Event) })
	if !found {
		t.Fatalf("no such event within %s; events so far:\n%s", d, r.dump())
	}
	return *n.Event
}

// dump lists the events read, each dated from the first start.
func (r *running) dump() string {
	var sb strings.Builder
	for _, e := range r.events {
		sb.WriteString(e.At.Sub(r.began).String() + " " + string(e.Kind))
		if e.Reason != "" {
			sb.WriteString(" [" + string(e.Reason) + "]")
		}
		sb.WriteString(" " + e.Text + "\n")
	}
	return sb.String()
}

// addTask adds the calc task on harness with the verify command and
// pipeline given (nil: the default pipeline).
func (r *running) addTask(t testing.TB, harness, verify string, p task.Pipeline) task.ID {
	t.Helper()
	res, err := r.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: verify,
		Harness: harness, Pipeline: p,
	}})
	require.NoError(t, err)
	return res.TaskID
}

// barrier returns once the loop has finished every iteration begun before
// it: the loop takes a command only between iterations, and publishes the
// snapshot at the end of each.
func (r *running) barrier(t testing.TB) {
	t.Helper()
	_, err := r.c.Do(context.Background(), Command{Kind: "barrier"})
	require.Error(t, err)
}

// taskView returns the task's view in a fresh snapshot.
func (r *running) taskView(t testing.TB, id task.ID) TaskView {
	t.Helper()
	for _, tv := range r.c.Snapshot().Tasks {
		if tv.Task.ID == id {
			return tv
		}
	}
	t.Fatalf("task %s is not in the snapshot", id)
	return TaskView{}
}
