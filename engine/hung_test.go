package engine

import (
	"context"
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An engine stopped with SIGSTOP mid-implement: a command that dials it is
// told within 2s that it is stopped, with its pid, instead of waiting out
// its timeout; EndHung ends it (SIGTERM, then SIGKILL) and leaves its
// agent running in its session host; the next engine takes the agent up
// with no requeue and no attempt charged.
func TestAStoppedEngineIsToldEndedAndItsAgentAdopted(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	cleanupHosts(t, root)
	script, _ := writeScript(t, fixCalc())
	e1 := startChild(t, root, script)
	cl := dialRoot(t, root)
	ch, unsub := cl.Subscribe()
	id := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	launched := waitEvent(t, ch, kindIs(task.EvSessionLaunched))
	var ld coord.LaunchedData
	require.NoError(t, json.Unmarshal(launched.Data, &ld))
	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	unsub()
	require.NoError(t, cl.Close())

	pid := e1.cmd.Process.Pid
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	p := PathsFor(root)
	require.Eventually(t, func() bool { return Stopped(pid) }, 30*time.Second, 10*time.Millisecond)

	// The command's own deadline is far off: what ends the dial is
	// finding the engine stopped.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := DialAnswering(ctx, p, Options{Version: "test", Kind: "cli"})
	took := time.Since(start)
	var hung *HungError
	require.True(t, errors.As(err, &hung), "%v", err)
	require.True(t, hung.Stopped)
	require.Equal(t, pid, hung.Pid)
	require.Less(t, took, 2*time.Second)
	require.Contains(t, err.Error(), "the engine (pid ")
	require.Equal(t, pid, StoppedHolder(p))

	// Let go on, it answers again.
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	require.Eventually(t, func() bool { return !Stopped(pid) }, 30*time.Second, 10*time.Millisecond)
	require.Zero(t, StoppedHolder(p))
	again, err := DialAnswering(ctx, p, Options{Version: "test", Kind: "cli"})
	require.NoError(t, err)
	require.Equal(t, pid, again.Pid())
	require.NoError(t, again.Close())

	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	require.Eventually(t, func() bool { return Stopped(pid) }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, EndHung(ctx, p, pid, time.Second))
	require.False(t, Held(p.Lock), "the engine still holds its lock")
	_ = e1.cmd.Wait()
	require.NoError(t, processAlive(ld.Pid), "the agent died with its engine")

	startChild(t, root, script)
	cl2 := dialRoot(t, root)
	evs := ledger(t, cl2, id)
	require.Equal(t, 1, countKind(evs, task.EvSessionAdopted), "the next engine did not take the agent up: %v", evs)
	require.Zero(t, countKind(evs, task.EvTaskRequeued), "the task was requeued")
	snap := cl2.Snapshot()
	require.Len(t, snap.Tasks, 1)
	require.Equal(t, task.StateRunning, snap.Tasks[0].Task.State)
	require.Equal(t, launched.SessionID, snap.Tasks[0].SessionID)
	require.Equal(t, 1, snap.Tasks[0].Task.Attempt)
	require.NoError(t, processAlive(ld.Pid))
}
