package vt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSplitWritesAgainstTmux cuts a stream of multi-byte characters and
// sequences at every offset: however the pty read splits the bytes, the
// screen is tmux's.
func TestSplitWritesAgainstTmux(t *testing.T) {
	needTmux(t)
	data := []byte("é日本\x1b[38;2;1;2;3m✳ 🎉\x1b[0m\x1b]0;✳ Claude Code\x07ok\x1b[1;32mcafe\u0301\x1b[0m\r\n\x1b[2;5H\x1b(0lqk\x1b(B end")
	ref := tmuxScreen(t, 30, 6, data)
	for cut := 1; cut < len(data); cut++ {
		term := New(30, 6, 100, nil)
		_, _ = term.Write(data[:cut])
		_, _ = term.Write(data[cut:])
		if d := diffScreens(term, ref); len(d) > 0 {
			t.Fatalf("split at byte %d: %d differences from tmux:\n%s", cut, len(d), strings.Join(d, "\n"))
		}
	}
	for chunk := 1; chunk <= 7; chunk++ {
		term := New(30, 6, 100, nil)
		feed(term, data, chunk)
		if d := diffScreens(term, ref); len(d) > 0 {
			t.Fatalf("%d-byte writes: %d differences from tmux:\n%s", chunk, len(d), strings.Join(d, "\n"))
		}
	}
}

// TestAgentStreamAgainstTmux runs a 256 KiB slice of the shared benchmark
// stream (compiler errors, ls colours, spinners, redrawn boxes, diffs,
// absolute moves, titles) at the two benchmark sizes, in 4 KiB writes.
func TestAgentStreamAgainstTmux(t *testing.T) {
	needTmux(t)
	data, err := os.ReadFile(filepath.Join("testdata", "agentstream-256k.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{120, 40}, {240, 60}, {80, 24}} {
		checkAgainstTmux(t, size[0], size[1], data, 4096)
		// Every prefix ending at a line break is a screen tmux showed too.
	}
	// A few prefixes, so the comparison is not only of the final screen.
	for _, n := range []int{1000, 33333, 100000, 200001} {
		checkAgainstTmux(t, 100, 30, data[:n], 1000)
	}
}
