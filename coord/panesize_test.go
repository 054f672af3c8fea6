package coord

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// castSize is the size a recording ends at: its header's, then each "r".
func castSize(t *testing.T, path string) (cols, rows int, resizes []string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h, evs, err := session.ReadCast(f)
	require.NoError(t, err)
	cols, rows = h.Width, h.Height
	for _, e := range evs {
		if e.Code == "r" {
			resizes = append(resizes, e.Data)
			_, err := fmt.Sscanf(e.Data, "%dx%d", &cols, &rows)
			require.NoError(t, err)
		}
	}
	return cols, rows, resizes
}

// A console lays a pane out while its session is still being prepared (or
// before the task is even placed): the size is not lost, the session starts
// at it, and the next session of the task starts at the last size asked.
func TestPaneSizeAskedBeforeLaunchIsApplied(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	require.NoError(t, b.c.ResizePane(id, 77, 21))
	launched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))

	cast := b.c.castPath(id, launched.SessionID)
	cols, rows, resizes := castSize(t, cast)
	require.Equal(t, [2]int{77, 21}, [2]int{cols, rows}, "the recording starts at the asked size")
	require.Empty(t, resizes, "no resize was needed")

	// A live resize reaches the pty (recorded) and the emulator.
	require.NoError(t, b.c.ResizePane(id, 90, 25))
	require.NoError(t, b.c.ResizePane(id, 90, 25), "asking again is a no-op")
	b.waitPaneSize(t, id, 90, 25)
	_, _, resizes = castSize(t, cast)
	require.Equal(t, []string{"90x25"}, resizes)
	require.Error(t, b.c.ResizePane(id, 0, 25))

	// A client asking for a pane of 100000x100000 (ten billion cells) gets
	// [pane]'s maxima, not an engine out of memory.
	require.NoError(t, b.c.ResizePane(id, 100000, 100000))
	b.waitPaneSize(t, id, config.MaxPaneCols, config.MaxPaneRows)
}

// A resize that races the launch (asked while the session is between its
// start and going live) ends with the pty at the asked size either way.
func TestPaneSizeRacingLaunchEndsAtAskedSize(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskLeased))
	require.NoError(t, b.c.ResizePane(id, 64, 18))
	launched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	b.waitPaneSize(t, id, 64, 18)
	cols, rows, _ := castSize(t, b.c.castPath(id, launched.SessionID))
	require.Equal(t, [2]int{64, 18}, [2]int{cols, rows})
}

// waitPaneSize waits on pane notices until the task's emulator has the size.
func (b *bundle) waitPaneSize(t *testing.T, id task.ID, cols, rows int) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		if v, ok := b.c.Pane(id); ok {
			if c, r := v.Size(); c == cols && r == rows {
				return
			}
		}
		select {
		case n := <-b.notices:
			if n.Event != nil {
				b.events = append(b.events, *n.Event)
			}
		case <-deadline.C:
			v, _ := b.c.Pane(id)
			c, r := v.Size()
			t.Fatalf("pane is %dx%d, want %dx%d", c, r, cols, rows)
		}
	}
}
