package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/lease"
)

// The working flag never says "0 s CPU" of a session it calls working: a
// short burst is said to a tenth of a second.
func TestWorkingTextSaysShortBurstsInTenths(t *testing.T) {
	t.Parallel()
	still := time.Minute
	for _, c := range []struct {
		used time.Duration
		want string
	}{
		{400 * time.Millisecond, "working: 0.4 s CPU in the last minute"},
		{20 * time.Millisecond, "working: 0.1 s CPU in the last minute"},
		{3 * time.Second, "working: 3.0 s CPU in the last minute"},
		{42 * time.Second, "working: 42 s CPU in the last minute"},
	} {
		require.Equal(t, c.want, workingText(lease.Progress{Working: c.used, Still: still}, 30*time.Second))
	}
	require.Empty(t, workingText(lease.Progress{Still: still}, 30*time.Second), "no CPU: not working")
}
