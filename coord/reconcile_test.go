package coord

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Stopping the console mid-lease stops the session, records its
// continuity and requeues the task once; the next instance finds no
// orphan and relaunches with a brief that carries the continuity.
func TestStopRequeuesLiveTaskOnceAndRelaunchesWithContinuity(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcHalf}}}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	ctx := context.Background()
	launched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	pid := launchedPid(t, launched)
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))
	b.waitRecord(t, 10*time.Second, "the first brief", func() bool { return b.recordedBrief(task.PhaseImplement, 1, 1) != "" })
	// The stalled agent draws its spinner only after its edit: the work
	// the stop's continuity must name is in the worktree then.
	b.waitPane(t, id, "Thinking…", 30*time.Second)

	b.stop()
	require.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "the session's process group outlived the console")
	requireNoAgentUnder(t, b.root)
	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateQueued, tk.State)
	require.Equal(t, string(task.ReasonLeaseOrphaned), tk.Reason)
	require.Equal(t, 0, tk.Attempt, "a console stop does not use up an attempt")
	_, err = b.st.LeaseGet(ctx, id)
	require.ErrorIs(t, err, store.ErrNotFound, "the stopping console released its lease")
	s, err := b.st.SessionGet(ctx, launched.SessionID)
	require.NoError(t, err)
	require.Equal(t, store.SessionKilled, s.Status)
	require.Contains(t, s.Continuity, "calc.go", "the stop recorded what the session had done")

	b.start(t)
	b.barrier(t) // the new instance has reconciled
	require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonLeaseOrphaned)), "a clean stop leaves no orphan")
	b.waitRecord(t, 30*time.Second, "the relaunched brief", func() bool { return b.recordedBrief(task.PhaseImplement, 1, 2) != "" })
	cont := section(t, b.recordedBrief(task.PhaseImplement, 1, 2), task.HeadingContinuity, task.HeadingDeadEnds)
	require.Contains(t, cont, launched.SessionID)
	require.Contains(t, cont, "The console stopped.")
	require.Contains(t, cont, "calc.go")
	requeues := b.ledger(t, id, func(e task.Event) bool {
		return e.Kind == task.EvTaskRequeued && e.Reason == task.ReasonLeaseOrphaned
	})
	require.Len(t, requeues, 1, "requeued exactly once")
}

// Stopping the console while a session is still being prepared (worktree,
// baseline verify) returns promptly, starts no agent, and leaves the task
// queued with no lease.
func TestStopWhilePreparingLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskLeased))
	b.stop()
	requireNoAgentUnder(t, b.root)
	ctx := context.Background()
	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateQueued, tk.State, "%v", b.ledger(t, id, func(task.Event) bool { return true }))
	_, err = b.st.LeaseGet(ctx, id)
	require.ErrorIs(t, err, store.ErrNotFound)
	ss, err := b.st.SessionList(ctx, id)
	require.NoError(t, err)
	for _, s := range ss {
		require.Equal(t, store.SessionKilled, s.Status)
	}
}

// requireNoAgentUnder fails if any process runs with its working directory
// under root: an agent of this test that outlived its console.
func requireNoAgentUnder(t testing.TB, root string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	root, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	procs, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		// A zombie has no cwd to read, so every process found here runs.
		cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
		if err != nil {
			continue
		}
		if cwd == root || strings.HasPrefix(cwd, root+string(filepath.Separator)) {
			t.Fatalf("process %d still runs in %s", pid, cwd)
		}
	}
}
