package e2e

import (
	"encoding/json"
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/vt"
)

// gradient is the size of the truecolor block gradScript draws.
const gradCols, gradRows = 40, 4

// gradScript draws a block of upper half blocks in 24-bit colour, a
// different foreground and background in every cell, below a marker line,
// then waits.
var gradScript = fmt.Sprintf(`stty -echo
printf '\033[H\033[2JGRAD-START\r\n'
r=0; while [ $r -lt %[2]d ]; do
  c=0; while [ $c -lt %[1]d ]; do
    printf '\033[38;2;%%d;%%d;200m\033[48;2;%%d;100;%%dm▀' $((c * 6 + 1)) $((r * 60 + 3)) $((250 - c * 6)) $((r * 50 + 7))
    c=$((c + 1))
  done
  printf '\033[0m\r\n'; r=$((r + 1))
done
printf 'GRAD READY\r\n'
while :; do sleep 1; done
`, gradCols, gradRows)

// gradHarness is the gradient as an orchestra.toml harness, with colors
// the console's colour setting ("" leaves the default).
func gradHarness(colors string) string {
	argv, _ := json.Marshal([]string{"/bin/sh", "-c", gradScript})
	conf := fmt.Sprintf(`[harness.grad]
argv = %s
env = ["PATH"]
delivery = "file"
ready = "GRAD READY"
quiet = "200ms"

[stuck]
after = "30m"
`, argv)
	if colors != "" {
		conf += fmt.Sprintf("\n[console]\ncolors = %q\n", colors)
	}
	return conf
}

// gradCells reads the gradient's cells from a capture-pane -e of a w x h
// terminal: the block below the GRAD-START marker, wherever it sits.
func gradCells(t *testing.T, captured string, w, h int) []uv.Cell {
	t.Helper()
	term := vt.New(w, h, 0, nil)
	_, err := term.Write([]byte(strings.ReplaceAll(strings.TrimRight(captured, "\n"), "\n", "\r\n")))
	require.NoError(t, err)
	buf := uv.NewScreenBuffer(w, h)
	term.Draw(buf, buf.Bounds())
	x0, y0 := -1, -1
	for y, line := range strings.Split(ansi.Strip(captured), "\n") {
		if i := strings.Index(line, "GRAD-START"); i >= 0 {
			x0, y0 = ansi.StringWidth(line[:i]), y+1
			break
		}
	}
	require.GreaterOrEqual(t, y0, 0, "the gradient's marker on the screen:\n%s", ansi.Strip(captured))
	cells := make([]uv.Cell, 0, gradCols*gradRows)
	for y := y0; y < y0+gradRows; y++ {
		for x := x0; x < x0+gradCols; x++ {
			c := buf.CellAt(x, y)
			require.NotNil(t, c, "cell %d,%d", x, y)
			cells = append(cells, *c)
		}
	}
	return cells
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ar, ag, ab, aa := a.RGBA()
	br, bg, bb, ba := b.RGBA()
	return ar == br && ag == bg && ab == bb && aa == ba
}

// differing counts the cells whose character or colours differ.
func differing(want, got []uv.Cell) int {
	n := 0
	for i := range want {
		if want[i].Content != got[i].Content || !sameColor(want[i].Style.Fg, got[i].Style.Fg) ||
			!sameColor(want[i].Style.Bg, got[i].Style.Bg) {
			n++
		}
	}
	return n
}

// Inside tmux with COLORTERM=truecolor, an agent's 24-bit colours reach
// the operator's terminal as they are: the pane in the console shows the
// same cells as tmux running the program itself (issue 24: bubbletea's
// detection ignores COLORTERM under tmux and drew them in 256 colours).
// console.colors = "256" is the override for a terminal that cannot.
func TestTruecolorInsideTmux(t *testing.T) {
	t.Parallel()
	ref := startTerm(t, "/bin/sh -c "+shellQuote(gradScript))
	ref.waitText(30*time.Second, "GRAD READY")
	want := gradCells(t, ref.colourScreen(), termCols, termRows)
	require.NotNil(t, want[0].Style.Bg, "tmux keeps the gradient's colours")

	for _, tc := range []struct {
		colors string
		same   bool
	}{{"", true}, {"256", false}} {
		t.Run("colors="+tc.colors, func(t *testing.T) {
			parallel(t)
			f := newFixture(t, agent.Script{}, gradHarness(tc.colors))
			f.orch(t, "add", "--title", "gradient", "--goal", "show colours", "--verify", "true",
				"--harness", "grad", "--pipeline", "implement")
			tm := f.console(t)
			tm.waitText(90*time.Second, "GRAD READY")
			got := gradCells(t, tm.colourScreen(), termCols, termRows)
			n := differing(want, got)
			if tc.same {
				require.Zero(t, n, "differing cells of %d", len(want))
			} else {
				require.Equal(t, len(want), n, "in 256 colours every cell of the gradient is rounded")
			}
		})
	}
}
