package ui

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// As the list narrows on a shared store, the attempt gives way before the
// machine a task runs on, and the title keeps a readable width.
func TestColumnsDropTheAttemptBeforeTheHost(t *testing.T) {
	t.Parallel()
	wide := columnsFor(120, 9)
	require.True(t, wide.attempt)
	require.Equal(t, 9, wide.hostW)
	var sawHostWithoutAttempt bool
	for w := 120; w >= 30; w-- {
		c := columnsFor(w, 9)
		require.False(t, c.attempt && c.hostW == 0, "width %d keeps the attempt but drops the host", w)
		sawHostWithoutAttempt = sawHostWithoutAttempt || (!c.attempt && c.hostW > 0)
		if c.hostW > 0 || c.attempt {
			require.GreaterOrEqual(t, c.titleW, minTitleW, "width %d", w)
		}
	}
	require.True(t, sawHostWithoutAttempt, "some width shows the host without the attempt")
}
