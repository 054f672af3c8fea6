package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A screen that changed only because the pty was resized (the agent
// redrawing itself over a few frames) reports the screen before the
// resize, so the lease and the stuck clock see no progress; what the agent
// draws after the resize has settled is progress again.
func TestAResizeIsNoProgress(t *testing.T) {
	t.Parallel()
	var rs resizeSeen
	t0 := time.Unix(1000, 0)
	require.Equal(t, "A", rs.screen("A", "", [2]int{120, 40}, t0), "the first screen")
	require.Equal(t, "B", rs.screen("B", "A", [2]int{120, 40}, t0.Add(time.Second)), "a change at one size is progress")
	// The pty goes to 200x50; the agent redraws in two frames.
	require.Equal(t, "B", rs.screen("B1", "B", [2]int{200, 50}, t0.Add(2*time.Second)))
	require.Equal(t, "B", rs.screen("B2", "B", [2]int{200, 50}, t0.Add(3*time.Second)))
	require.Equal(t, "B", rs.screen("B2", "B", [2]int{200, 50}, t0.Add(10*time.Second)), "the redrawn screen stays the resize's")
	require.Equal(t, "C", rs.screen("C", "B", [2]int{200, 50}, t0.Add(11*time.Second)), "new output after it is progress")
	// And back: the screen before the second resize stands for both.
	require.Equal(t, "C", rs.screen("C1", "C", [2]int{120, 40}, t0.Add(12*time.Second)))
	require.Equal(t, "D", rs.screen("D", "C", [2]int{120, 40}, t0.Add(20*time.Second)))
}
