package coord

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A dead console's pid given by the kernel to another process: the pid is
// alive, but its start time is not the holder's. Reconcile requeues the
// task instead of leaving it running for ever.
func TestReusedHolderPidIsNotAlive(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	b.stop()

	// The process now holding the dead console's pid.
	other := exec.Command("sleep", "600")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	pid := other.Process.Pid
	start, err := procStart(pid)
	require.NoError(t, err)
	alive := fmt.Sprintf("console:%d:%d:SOMEINSTANCE", pid, start)
	require.True(t, holderAlive(alive), "the same pid and start time is alive")
	reused := fmt.Sprintf("console:%d:%d:DEADINSTANCE", pid, start-1)
	require.False(t, holderAlive(reused), "another start time is another process")

	ctx := context.Background()
	now := time.Now()
	tk, err := Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
		Verify: project.VerifyCommand, Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, now)
	require.NoError(t, err)
	require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))
	l, err := b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: tk.ID, Holder: reused, ExpectState: task.StateQueued,
		GrantedAt: now, Deadline: now.Add(20 * time.Minute), Baseline: lease.Progress{At: now}})
	require.NoError(t, err)
	running := tk
	running.State, running.Attempt = task.StateRunning, 1
	require.NoError(t, b.st.TaskUpdate(ctx, store.TaskUpdateParams{Task: running, ExpectState: task.StateLeased, ExpectToken: l.Token}))

	b.start(t)
	orphaned := b.waitEvent(t, 10*time.Second, refusalOf(task.ReasonLeaseOrphaned))
	require.Equal(t, tk.ID, orphaned.TaskID)
	require.Contains(t, orphaned.Text, fmt.Sprintf("The engine pid %d is gone.", pid))
	b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskLeased))
}

// This process's own holder name carries its start time.
func TestHolderNamesPidAndStartTime(t *testing.T) {
	t.Parallel()
	start, err := procStart(os.Getpid())
	require.NoError(t, err)
	require.Regexp(t, fmt.Sprintf(`^engine:%d:%d:[0-9A-Z]{26}$`, os.Getpid(), start), newHolder(task.NewULID(time.Now())))
	require.False(t, holderAlive(newHolder("X")), "an instance in this process that is not the caller is gone")
}
