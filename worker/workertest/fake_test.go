package workertest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

func start(t *testing.T, stuckAfter time.Duration) (*Fake, chan worker.Report) {
	t.Helper()
	reports := make(chan worker.Report, 64)
	gone := make(chan struct{})
	t.Cleanup(func() { close(gone) })
	h, err := NewFactory(t).Start(context.Background(), worker.Params{
		TaskID: "T1", SessionID: "S1", Token: 7, Phase: task.PhaseImplement,
		Cols: 80, Rows: 24, StuckAfter: stuckAfter, Reports: reports, Gone: gone,
	})
	require.NoError(t, err)
	f := h.(*Fake)
	t.Cleanup(func() { _ = f.Stop(time.Second) })
	return f, reports
}

// A correction sent before the brief is typed after it, as a worker does;
// each typed input is reported with the assignment's stamp.
func TestFakeTypesTheBriefFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, reports := start(t, 0)
		done := make(chan error, 1)
		f.Send(worker.Input{Kind: worker.InputDecision, ID: "D1", Text: "Use ints.", Done: done})
		synctest.Wait()
		require.Empty(t, f.Typed(), "nothing is typed before the brief")
		f.Send(worker.Input{Kind: worker.InputBrief, Text: "the brief"})
		require.Equal(t, worker.InputBrief, f.NextInput().Kind)
		require.Equal(t, worker.InputDecision, f.NextInput().Kind)
		require.NoError(t, <-done)
		for _, want := range []worker.InputKind{worker.InputBrief, worker.InputDecision} {
			rep := <-reports
			require.Equal(t, worker.InputDelivered, rep.Kind)
			require.Equal(t, want, rep.Input)
			require.Equal(t, int64(7), rep.Token)
			require.Equal(t, task.ID("T1"), rep.TaskID)
		}
	})
}

// A still screen is stuck exactly StuckAfter after the brief, and drawing
// again says so.
func TestFakeStuckClockRunsFromTheBrief(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, reports := start(t, time.Minute)
		time.Sleep(time.Hour) // no brief yet: waiting on the console
		synctest.Wait()
		require.Empty(t, reports)
		f.Send(worker.Input{Kind: worker.InputBrief, Text: "the brief"})
		briefed := (<-reports).At
		stuck := <-reports
		require.Equal(t, worker.Stuck, stuck.Kind)
		require.Equal(t, time.Minute, stuck.At.Sub(briefed))
		require.Equal(t, time.Minute, stuck.Idle)
		f.Work("again")
		require.Equal(t, worker.Unstuck, (<-reports).Kind)
		require.Equal(t, worker.Stuck, (<-reports).Kind)
		require.NotEqual(t, f.Sample().Screen, "")
	})
}

// Stop ends the agent as SIGTERM does, or, for one that ignores it, kills
// it after exactly the grace; the exit is reported before Stop returns.
func TestFakeStopHonoursGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, reports := start(t, 0)
		f.IgnoreTerm()
		begin := time.Now()
		require.NoError(t, f.Stop(30*time.Second))
		require.Equal(t, 30*time.Second, time.Since(begin))
		require.Equal(t, ExitKill, f.ExitCode())
		rep := <-reports
		require.Equal(t, worker.Exited, rep.Kind)
		require.Equal(t, ExitKill, rep.ExitCode)
		require.Error(t, f.Write([]byte("x")), "an ended session takes no keys")
		done := make(chan error, 1)
		f.Send(worker.Input{Kind: worker.InputBrief, Done: done})
		require.ErrorIs(t, <-done, worker.ErrClosed)
	})
}
