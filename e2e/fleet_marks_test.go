package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// waitExit waits, on a pidfd, until process pid has exited, for at most d.
func waitExit(t testing.TB, pid int, d time.Duration) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		require.Positive(t, left, "process %d did not exit within %s", pid, d)
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left/time.Millisecond)+1)
		if err == nil && n > 0 {
			return
		}
	}
}

// TestFleetEnginesOnOneMachineNeverSignalEachOthersAgents: two engines of
// a fleet on one machine (two clones, one PostgreSQL store). Engine
// machine-a holds a live agent of task T; its engine process freezes past
// the TTL (its session host runs on, and freezes the agent by its
// dead-man switch: TestFleetAnEngineStoppedAloneLeavesItsAgentFrozen), so
// machine-b takes T over and launches its own agent, after its launch
// sweep for T (the fencing
// by mark and cgroup). That sweep must leave machine-a's agent alone: it
// is another engine's (issue 23: it died with 143, SIGTERM from the
// sweep). When machine-a comes back it learns T is no longer its own and
// ends its own agent, never machine-b's; T finishes green on machine-b
// with its attempt uncharged.
func TestFleetEnginesOnOneMachineNeverSignalEachOthersAgents(t *testing.T) {
	parallel(t)
	f, ids, b, agentA, ea := stopEngineAlone(t)
	id := ids[0]
	ctx := context.Background()
	f.waitStore(t, time.Minute, "machine-b takes T over and launches its agent", func() bool { return len(f.liveSessions(t, ids, b.ID)) == 1 })
	sb := f.liveSessions(t, ids, b.ID)[0]
	agentB := f.launched(t, sb)
	require.NoError(t, alive(agentA.Pid), "machine-a's agent (pid %d) was signalled by machine-b's sweep for T", agentA.Pid)
	require.NoError(t, alive(agentB.Pid))

	// machine-a comes back, finds T taken and ends its own agent only.
	require.NoError(t, syscall.Kill(ea.cmd.Process.Pid, syscall.SIGCONT))
	waitExit(t, agentA.Pid, time.Minute)
	require.NoError(t, alive(agentB.Pid), "machine-b's agent (pid %d) was signalled when machine-a ended its own", agentB.Pid)

	f.correct(t, "machine-b", id, "go ahead")
	f.waitStore(t, 5*time.Minute, "T green on machine-b", func() bool { return f.allAwaiting(t, ids) })
	sessions := f.checkFinished(t, ids)
	require.Len(t, sessions[id], 2, "one session on each machine: %v", sessions[id])
	require.Equal(t, b.ID, sessions[id][1].Holder)
	tk, err := f.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, tk.Attempt, "the takeover charged no attempt")
	ss, err := f.st.SessionGet(ctx, sb.ID)
	require.NoError(t, err)
	require.Equal(t, store.SessionExited, ss.Status, "machine-b's session ended as a finished phase's does: %+v", ss)
	require.NotEqual(t, 143, ss.ExitCode, "machine-b's agent was not ended by a SIGTERM")
}

// stopEngineAlone starts machine-a's engine with one task's agent live
// (awaiting a decision), then machine-b's, and stops machine-a's engine
// alone (SIGSTOP: its session host and agent are not). It returns the
// fleet, the task, machine-b's engine, machine-a's agent and engine.
func stopEngineAlone(t *testing.T) (*fleet, []task.ID, store.Engine, coord.LaunchedData, *fleetEngine) {
	t.Helper()
	f := newFleetWith(t, []string{"machine-a", "machine-b"}, 1, awaitingFix())
	f.start(t, "machine-a")
	ids := f.add(t, "machine-a", 1)
	a := f.engineOf(t, "machine-a")
	f.waitStore(t, 3*time.Minute, "machine-a runs T's agent", func() bool { return len(f.liveSessions(t, ids, a.ID)) == 1 })
	agentA := f.launched(t, f.liveSessions(t, ids, a.ID)[0])
	f.start(t, "machine-b")
	b := f.engineOf(t, "machine-b")

	ea := f.engines["machine-a"]
	require.NoError(t, syscall.Kill(ea.cmd.Process.Pid, syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(ea.cmd.Process.Pid, syscall.SIGCONT) })
	return f, ids, b, agentA, ea
}
