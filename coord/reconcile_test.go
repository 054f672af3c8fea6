package coord

import (
	"context"
	"fmt"
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
	"github.com/orchestra-tui/orchestra-tui/lease"
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

// A console killed without shutdown leaves its lease behind. The next
// instance expires it and requeues the task exactly once; the task then
// runs to green, and a third instance finds nothing to do.
func TestRestartExpiresOrphanedLeaseOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	b.stop()

	// What a killed console leaves: a running task, its lease held by an
	// instance that is gone, and a session that looks live.
	ctx := context.Background()
	now := time.Now()
	tk, err := Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
		Verify: project.VerifyCommand, Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, now)
	require.NoError(t, err)
	require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))
	dead := fmt.Sprintf("console:%d:OLDINSTANCE", os.Getpid())
	l, err := b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: tk.ID, Holder: dead, ExpectState: task.StateQueued,
		GrantedAt: now, Deadline: now.Add(20 * time.Minute), Baseline: lease.Progress{At: now}})
	require.NoError(t, err)
	running := tk
	running.State, running.Attempt = task.StateRunning, 1
	require.NoError(t, b.st.TaskUpdate(ctx, store.TaskUpdateParams{Task: running, ExpectState: task.StateLeased, ExpectToken: l.Token}))
	old := store.Session{ID: task.NewULID(now), TaskID: tk.ID, Phase: task.PhaseImplement, Attempt: 1, Harness: "scripted",
		Token: l.Token, Holder: dead, Status: store.SessionConfirmed, StartedAt: now}
	require.NoError(t, b.st.SessionInsert(ctx, old))

	b.start(t)
	orphaned := b.waitEvent(t, 10*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvRefusal && e.Reason == task.ReasonLeaseOrphaned
	})
	require.Equal(t, tk.ID, orphaned.TaskID)
	require.Contains(t, orphaned.Text, fmt.Sprintf("The engine pid %d is gone.", os.Getpid()))
	leased := b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskLeased))
	require.Contains(t, orphaned.Text, "Attempt 1 of phase implement is not counted")
	require.Contains(t, leased.Text, "attempt 1", "the orphaned attempt is not charged: the console died, not the agent")
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	s, err := b.st.SessionGet(ctx, old.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionKilled, s.Status, "the dead console's session no longer looks live")
	require.Len(t, b.ledger(t, tk.ID, refusalOf(task.ReasonLeaseOrphaned)), 1)

	b.stop()
	b.start(t)
	b.barrier(t)
	require.Len(t, b.ledger(t, tk.ID, refusalOf(task.ReasonLeaseOrphaned)), 1, "the third start found nothing to do")
	got, err := b.st.TaskGet(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateAwaitingReview, got.State)
	leases, err := b.st.LeaseList(ctx)
	require.NoError(t, err)
	require.Empty(t, leases)
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
