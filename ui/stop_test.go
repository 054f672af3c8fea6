package ui

import (
	"context"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// attached makes the bundle's console one attached to an engine: q
// detaches, Q stops the engine through stop.
func attached(b *bundle, stop func(context.Context) error) *bundle {
	b.m.opt.Detach, b.m.opt.StopEngine = true, stop
	b.m.keys.stop.SetEnabled(true)
	return b
}

func TestAttachedConsoleDetachesOnQWithoutAsking(t *testing.T) {
	t.Parallel()
	b := attached(setup(t, everyState).size(120, 40).selectState(task.StateRunning), func(context.Context) error {
		t.Fatal("q must not stop the engine")
		return nil
	})
	b.press("q")
	require.True(t, b.quit, "q detaches at once: nothing stops")
}

func TestStopKeyAsksThenStopsTheEngineAndQuits(t *testing.T) {
	t.Parallel()
	stopped := 0
	b := attached(setup(t, everyState).size(120, 40), func(context.Context) error { stopped++; return nil })
	b.press("Q")
	require.Contains(t, ansi.Strip(b.view()), "Stop the engine and")
	require.Zero(t, stopped, "nothing stops before the answer")
	b.press("n")
	require.Zero(t, stopped)
	require.False(t, b.quit)
	b.press("Q", "y")
	require.Equal(t, 1, stopped)
	require.True(t, b.quit)
}

func TestStopKeyDoesNothingInAnInProcessConsole(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	b.press("Q")
	require.NotContains(t, ansi.Strip(b.view()), "Stop the engine")
}
