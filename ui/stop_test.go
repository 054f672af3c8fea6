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

// In-process, the engine lives as long as the console: Q asks what q asks
// (quitting stops the running sessions), and quits on yes.
func TestStopKeyInAnInProcessConsoleQuitsAsQDoes(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	b.press("Q")
	require.Contains(t, ansi.Strip(b.view()), "quitting stops")
	require.False(t, b.quit, "nothing stops before the answer")
	b.press("y")
	require.True(t, b.quit)
}

// ? lists Q in an attached console and in an in-process one alike.
func TestHelpListsTheStopKey(t *testing.T) {
	t.Parallel()
	for name, b := range map[string]*bundle{
		"in-process": setup(t, everyState),
		"attached":   attached(setup(t, everyState), func(context.Context) error { return nil }),
	} {
		s := ansi.Strip(b.size(80, 24).press("?").view())
		require.Contains(t, s, "Q       stop engine and agents (asks)", "%s:\n%s", name, s)
	}
}
