package coord

import (
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// TestShutdownWithAFullReportBuffer checks the console stops even when the
// workers' report buffer is full as it shuts down: a stopping worker sends
// its exit before Stop returns, and shutdown must read it meanwhile.
func TestShutdownWithAFullReportBuffer(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))

	b.cancel()
	// Fill the buffer behind the loop's back with reports of no task; the
	// loop may read a few before it notices the cancellation.
	junk := worker.Report{Kind: worker.Unstuck, TaskID: "none", SessionID: "none"}
	fill := time.NewTimer(2 * time.Second)
	defer fill.Stop()
filling:
	for range cap(b.c.reports) + 8 {
		select {
		case b.c.reports <- junk:
		case <-fill.C:
			break filling
		}
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	select {
	case <-b.c.Done():
	case <-deadline.C:
		t.Fatal("the coordinator did not stop: shutdown waited for a worker blocked on a full report buffer")
	}
}
