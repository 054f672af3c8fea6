package headless

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A task title and a correction carrying a clipboard write (OSC 52), a
// clear screen, a window title, a reset and an 8-bit CSI print as their
// words only, on one line.
func TestEventTextReachesTheTerminalWithoutEscapes(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := New(&out, Stable)
	p.Print(task.Event{TaskID: "01KB0000000000000000000001", Kind: task.EvTaskAdded,
		Text: "Task added: Fix\x1b]52;c;cm0gLXJmIH4K\x07 calc\x1b[2J\x1b[H\x1b]0;pwned\x1b\\\x1bc\u009b31m done"})
	p.Print(task.Event{TaskID: "01KB0000000000000000000001", Kind: task.EvDecisionRecorded,
		Text: "Human decision by op: stop\x1b]52;c;eA==\x1b\\ now\r\nsecond\tline\x00\x7f"})
	require.Equal(t, "T1   task.added                       Task added: Fix calc done\n"+
		"T1   decision.recorded                Human decision by op: stop now ⏎ second line\n", out.String())
}

func TestPrintableKeepsText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "héllo — ✓ 日本", Printable("héllo — ✓ 日本"))
	require.Equal(t, "bad \uFFFD byte", Printable("bad \xff byte"))
}
