package worker

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An agent that dies mid-phase, leaving a child of its own behind, is torn
// down before its exit is reported: nothing of its process group is left
// when the coordinator hears of the exit, and the exit says what the agent
// did not write. The real process is the point here (a pty, a process
// group, a signal), so the wait is for the exit's report, bounded by the
// launch timeout's order of magnitude, not by a lease.
func TestACrashedAgentLeavesNoProcessBehind(t *testing.T) {
	t.Parallel()
	reports := make(chan Report, 64)
	r, err := Start(context.Background(), Params{
		TaskID: task.ID("T" + t.Name()), SessionID: "S1", Token: 1, Phase: task.PhaseImplement,
		Spec: session.Spec{Name: "crash", Argv: []string{"/bin/sh", "-c", "sleep 600 & printf 'working'; exit 3"},
			Env: []string{"PATH"}, Delivery: session.DeliveryArg},
		Dir: t.TempDir(), Cols: 80, Rows: 24, Reports: reports,
	})
	require.NoError(t, err)
	pid := r.Pid()
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for {
		select {
		case rep := <-reports:
			if rep.Kind != Exited {
				continue
			}
			require.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "process group %d outlived the crash", pid)
			require.Equal(t, 3, rep.ExitCode)
			require.NotNil(t, rep.Refusal)
			require.Equal(t, task.ReasonSessionExited, rep.Refusal.Reason)
			require.Contains(t, rep.Refusal.Detail, "exited with code 3 without writing "+task.SentinelPath)
			<-r.Done()
			return
		case <-guard.C:
			_ = r.Stop(time.Second)
			t.Fatal("no exit reported within a minute")
		}
	}
}
