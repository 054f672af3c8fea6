package session

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A flooding pane's recording stops growing at its cap, and the recording
// says where and why it was cut; it stays a valid asciicast.
func TestRecordingStopsAtItsCapWithAMarker(t *testing.T) {
	t.Parallel()
	// The agent floods until it is stopped.
	b := setup(t, shSpec(`echo 'ready>'; while :; do echo "flooding the pane with a line of output"; done`, `ready>`),
		func(p *Params) { p.RecordMax = 64 << 10 })
	waitFor(t, b.s, "the flood", func() bool { return strings.Contains(b.s.View().Text(), "flooding") })
	// Wait (on the session's change signal) until the recording has been cut.
	waitFor(t, b.s, "the cut", func() bool {
		data, err := os.ReadFile(b.cast)
		return err == nil && strings.Contains(string(data), "recording cut at")
	})
	require.NoError(t, b.s.Stop(0))
	fi, err := os.Stat(b.cast)
	require.NoError(t, err)
	require.Less(t, fi.Size(), int64(64<<10+4<<10), "the recording grew past its cap")

	f, err := os.Open(b.cast)
	require.NoError(t, err)
	defer f.Close()
	_, events, err := ReadCast(f)
	require.NoError(t, err)
	last := events[len(events)-1]
	require.Equal(t, "m", last.Code)
	require.Contains(t, last.Data, "recording cut at")
	require.Contains(t, last.Data, "limits.recording_bytes")
}
