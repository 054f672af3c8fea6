package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// On a store engines share, the task list shows the machine each live task
// runs on; on a narrow console the column gives way once the flag has,
// and it is not there at all on one machine.
func TestTaskListShowsTheHost(t *testing.T) {
	t.Parallel()
	b := setup(t, func(e *stubEngine) {
		everyState(e)
		for i := range e.snap.Tasks {
			if e.snap.Tasks[i].Task.State == task.StateRunning {
				e.snap.Tasks[i].Host = "build-box-2"
			}
		}
	})
	wide := ansi.Strip(b.size(200, 50).view())
	require.Contains(t, wide, "HOST")
	var row string
	for _, l := range strings.Split(wide, "\n") {
		if strings.Contains(l, "build-box-2") {
			row = l
		}
	}
	require.NotEmpty(t, row, wide)
	require.Contains(t, row, "running")

	for _, w := range []int{80, 100} {
		for _, l := range strings.Split(b.size(w, 30).view(), "\n") {
			require.LessOrEqual(t, ansi.StringWidth(l), w, "no line overflows at %d columns", w)
		}
	}
	narrow := ansi.Strip(b.size(60, 24).view())
	require.NotContains(t, narrow, "HOST", "at 60 columns the title keeps its room")

	one := ansi.Strip(setup(t, everyState).size(200, 50).view())
	require.NotContains(t, one, "HOST", "one machine: no column")
}
