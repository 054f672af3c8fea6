package session

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Recording a flooding pane's output makes no garbage per chunk beyond
// the encoder's boxing of the text: a chunk split inside a UTF-8 character
// included, and nothing at all once the recording was cut at its cap.
func TestCastEventAllocatesNoCopyOfTheChunk(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates on its own: run without -race to count allocations")
	}
	c, err := createCast(filepath.Join(t.TempDir(), "s.cast"), 80, 24, nil, time.Now)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	line := []byte("internal/pkg/file.go:12:3: \x1b[1;31merror:\x1b[0m café 日本語 ✓\r\n")
	chunk := bytes.Repeat(line, 32<<10/len(line))
	chunk = chunk[:len(chunk)-2] // ends inside 日本語's last character's line: a carry
	allocs := testing.AllocsPerRun(50, func() { c.event("o", chunk) })
	require.LessOrEqual(t, allocs, 1.0, "a chunk of %d bytes is not copied", len(chunk))

	c.max = c.written + 1 // the next event crosses the cap
	c.event("o", chunk)
	require.True(t, c.cut)
	require.Zero(t, testing.AllocsPerRun(50, func() { c.event("o", chunk) }), "a cut recording costs nothing")
}
