package headless

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// A subscription whose close was already seen is nil; draining it must end
// at once rather than block the run's exit forever.
func TestDrainEndsOnASubscriptionAlreadyClosed(t *testing.T) {
	t.Parallel()
	n := 0
	for range drain(nil) {
		n++
	}
	require.Zero(t, n)
	ch := make(chan coord.Notice, 1)
	ch <- coord.Notice{Pane: "t"}
	close(ch)
	for range drain(ch) {
		n++
	}
	require.Equal(t, 1, n)
}
