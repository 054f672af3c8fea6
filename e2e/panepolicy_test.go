package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
)

const otherSized = "sized by another console"

// Two consoles, at 200x50 and 120x40, show the same two panes in grid
// mode, as tmux's window-size "latest" does it: a pane's pty has the size
// of the console that last typed into or focused it, the other console
// shows it at that size with a marker, and looking at a pane resizes
// nothing. (That the probe's redraw on each resize is no progress for its
// stuck clock is worker's TestAResizeIsNoProgress.)
func TestTwoConsolesSizePanesByTheLatest(t *testing.T) {
	parallel(t)
	log := filepath.Join(t.TempDir(), "sizes.log")
	f := newFixture(t, agent.Script{}, probeHarness(log)+"\n[[slots]]\nharness = \"probe\"\ncapacity = 2\n")
	t.Cleanup(func() { _, _ = runIn(f, "stop") })
	for _, title := range []string{"probe one", "probe two"} {
		f.orch(t, "add", "--title", title, "--goal", "know the terminal",
			"--verify", "true", "--harness", "probe", "--pipeline", "implement")
	}
	big := f.attachTermSized(t, 200, 50)
	big.waitText(90*time.Second, "2 live")
	selectTask(big, "probe one")
	big.keys("g")
	bigCell := big.waitScreen("both probes drawn at the big console's grid cells", 60*time.Second, func(s string) bool {
		return strings.Count(s, "PROBE READY SIZE ") == 2 && strings.Contains(s, "· GRID") && !strings.Contains(s, otherSized)
	})

	small := f.attachTermSized(t, 120, 40)
	small.waitText(90*time.Second, "2 live")
	selectTask(small, "probe one")
	small.keys("g")
	small.waitScreen("both panes marked in the small console, which only looks", 60*time.Second, func(s string) bool {
		return strings.Count(s, otherSized) == 2
	})
	require.Equal(t, strings.Count(bigCell, "PROBE READY SIZE "), strings.Count(big.screen(), "PROBE READY SIZE "))
	require.NotContains(t, big.screen(), otherSized, "looking from the small console resized nothing")

	// The small console's operator focuses the selected pane and types:
	// that pty takes its size; the big console now marks that pane.
	small.keys("Enter")
	small.waitText(30*time.Second, "FOCUS")
	small.keys("C-]")
	small.waitScreen("focus left", 30*time.Second, func(s string) bool { return !strings.Contains(s, "FOCUS") })
	small.waitScreen("one pane sized by the small console, one still marked", 60*time.Second, func(s string) bool {
		return strings.Count(s, otherSized) == 1
	})
	big.waitScreen("the big console marks the pane the small one took", 60*time.Second, func(s string) bool {
		return strings.Count(s, otherSized) == 1
	})

	// The big console's operator takes it back by focusing it.
	big.keys("Enter")
	big.waitText(30*time.Second, "FOCUS")
	big.keys("C-]")
	big.waitScreen("focus left", 30*time.Second, func(s string) bool { return !strings.Contains(s, "FOCUS") })
	big.waitScreen("the big console's panes unmarked again", 60*time.Second, func(s string) bool {
		return !strings.Contains(s, otherSized) && strings.Count(s, "PROBE READY SIZE ") == 2
	})
	small.waitScreen("the small console marks both again", 60*time.Second, func(s string) bool {
		return strings.Count(s, otherSized) == 2
	})
}
