package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
)

// briefLine is the line a shell pane shows in place of its brief: longer
// than a grid cell at every size here, and than the pane at 80 columns.
const briefLine = "orchestra: the brief for phase implement is in .orchestra/brief.md (nothing is typed into this pane)"

// wholeLine says whether screen shows line whole in a pane reaching the
// terminal's right edge: it starts on some row and, where the pane is
// narrower than it, goes on at the same column of the rows below, as the
// emulator re-wraps it.
func wholeLine(screen, line string) bool {
	rows := strings.Split(screen, "\n")
	head := line[:40]
	for y, r := range rows {
		i := strings.Index(r, head)
		if i < 0 {
			continue
		}
		x0 := ansi.StringWidth(r[:i])
		var joined strings.Builder
		for k := y; k < len(rows) && k < y+4; k++ {
			joined.WriteString(ansi.Cut(rows[k], x0, ansi.StringWidth(rows[k])))
		}
		if strings.HasPrefix(joined.String(), line) {
			return true
		}
	}
	return false
}

// The shell pane's brief line is whole after the grid, a zoom and back,
// in consoles of 80x24, 120x40 and 200x50: the grid's narrow cells wrap it
// and the wider pane after re-wraps it (issue 24: it stayed cut at the
// grid cell's width).
func TestBriefLineWholeAfterGridAndZoom(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			parallel(t)
			// Two shells at once, so the grid has two cells.
			f := newFixture(t, agent.Script{}, "[[slots]]\nharness = \"shell\"\ncapacity = 2\n")
			for _, title := range []string{"first shell", "second shell"} {
				f.orch(t, "add", "--title", title, "--goal", "look around", "--verify", "true",
					"--harness", "shell", "--pipeline", "implement")
			}
			tm := f.consoleSized(t, size[0], size[1])
			whole := func(step string, layout func(string) bool) {
				t.Helper()
				tm.waitScreen(step+": the brief line whole", 90*time.Second, func(s string) bool {
					return layout(s) && wholeLine(s, briefLine)
				})
			}
			// Narrowing can push the line's first row into the pane's
			// history, as in tmux: scroll mode from the top shows the
			// history and the screen as one text.
			inHistory := func(step string) {
				t.Helper()
				tm.keys("s")
				tm.waitText(30*time.Second, "SCROLL · ")
				tm.keys("g")
				whole(step+", the pane's history from the top", func(s string) bool { return strings.Contains(s, "SCROLL · ") })
				tm.keys("Escape")
				tm.waitScreen("scroll mode left", 30*time.Second, func(s string) bool { return layoutPlain(s) && !strings.Contains(s, "SCROLL · ") })
			}
			tm.waitText(90*time.Second, "this pane)") // its pane is live
			inHistory("launch")
			tm.keys("g")
			tm.waitScreen("the grid", 30*time.Second, layoutGrid)
			tm.keys("z")
			whole("zoomed from the grid", layoutZoom)
			tm.keys("C-]")
			tm.waitScreen("back in the grid", 30*time.Second, layoutGrid)
			tm.keys("g")
			tm.waitScreen("the single pane again", 30*time.Second, layoutPlain)
			inHistory("back from the grid")
		})
	}
}
