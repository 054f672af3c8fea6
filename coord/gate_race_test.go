package coord

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A verify gate whose task was parked and unparked while it ran belongs to
// a session that is gone: when it comes back, a new session holds the task
// (or is in its own gate). The old gate's result must not move the task,
// commit the new session's half-done work or count as its verdict.
func TestAGateOfAReplacedSessionIsIgnored(t *testing.T) {
	t.Parallel()
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: fixed}},
	}}, nil)
	// The gate waits on a fifo while it exists, so the test decides when
	// the first gate's result comes back; the baseline runs before the fifo
	// is made. The agent runs the same command and must not wait: it has
	// the re-exec variable in its environment, the console does not.
	hold := filepath.Join(t.TempDir(), "hold")
	verifyCmd := fmt.Sprintf("if [ -z \"${%s:-}\" ] && [ -p %q ]; then cat %q >/dev/null; fi; %s",
		agent.ReexecEnv, hold, hold, project.VerifyCommand)
	ctx := context.Background()
	res, err := b.c.Do(ctx, Command{Kind: CmdAdd, Task: &task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: verifyCmd,
		Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement},
	}})
	require.NoError(t, err)
	id := res.TaskID

	first := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.NoError(t, syscall.Mkfifo(hold, 0o600))
	b.waitEvent(t, 30*time.Second, kindIs(task.EvVerifyStarted))
	_, err = b.c.Do(ctx, Command{Kind: CmdPark, TaskID: id})
	require.NoError(t, err)
	_, err = b.c.Do(ctx, Command{Kind: CmdUnpark, TaskID: id})
	require.NoError(t, err)
	second := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.NotEqual(t, first.SessionID, second.SessionID)
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))

	// Release every gate waiting on the fifo (the first one, and the
	// second session's if it got there), then let later gates run freely.
	f, err := os.OpenFile(hold, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, os.Remove(hold))
	require.NoError(t, f.Close())

	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	require.Equal(t, second.SessionID, last.SessionID, "the second session's own gate finished the task")
	require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonStaleLeaseToken)), "the old gate tried to move the task:\n%s", b.dump())
	for _, e := range b.ledger(t, id, kindIs(task.EvTaskAwaiting)) {
		require.Equal(t, second.SessionID, e.SessionID)
	}
}
