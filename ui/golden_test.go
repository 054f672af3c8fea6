package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

var goldenSizes = [][2]int{{80, 24}, {120, 40}, {200, 50}}

// scenarios are the screens the golden files pin down, each built from a
// fresh console at a given size.
var scenarios = []struct {
	name  string
	fill  func(*stubEngine)
	drive func(*bundle)
}{
	{"empty", nil, func(*bundle) {}},
	{"states", everyState, func(*bundle) {}},
	{"live", everyState, func(b *bundle) { b.selectState(task.StateRunning) }},
	{"focus", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("enter") }},
	{"zoom", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("z") }},
	{"correction", everyState, func(b *bundle) {
		b.selectState(task.StateRunning).press("c").typeText("keep the public API unchanged")
	}},
	{"resume", everyState, func(b *bundle) {
		b.selectState(task.StateRunning).press("n", "ctrl+r").typeText("handoff.json")
	}},
	{"brief", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("2") }},
	{"verdict", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("3") }},
	{"events", everyState, func(b *bundle) { b.selectState(task.StateRunning).press("4") }},
	{"grid", everyState, func(b *bundle) { b.press("g") }},
	{"quit", everyState, func(b *bundle) { b.press("q") }},
	{"help", everyState, func(b *bundle) { b.press("?") }},
	{"banner", everyState, func(b *bundle) {
		b.selectState(task.StateRunning).send(BannerMsg{Title: "DEMO FINISHED · every proof held · the run stays open to explore · q quits", Tone: ToneOK,
			Lines: []string{"✓ the relaunched implement brief names the first attempt's files and puts the correction above the plan", "✓ the tests pass"}})
	}},
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		for _, sz := range goldenSizes {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				b := setup(t, sc.fill).size(sz[0], sz[1])
				sc.drive(b)
				out := b.view()
				requireFits(t, out, sz[0], sz[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

// requireFits checks a frame neither overflows the terminal's width nor
// has more lines than its height.
func requireFits(t testing.TB, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	require.LessOrEqual(t, len(lines), h, "frame has more lines than the terminal at %dx%d", w, h)
	for i, l := range lines {
		require.LessOrEqual(t, ansi.StringWidth(l), w, "line %d overflows at %dx%d: %q", i, w, h, ansi.Strip(l))
	}
}

func TestWidthSweep(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, sc.fill)
			b.size(120, 40)
			sc.drive(b)
			for _, h := range []int{16, 24, 33, 50} {
				for w := 60; w <= 220; w += 7 {
					b.size(w, h)
					requireFits(t, b.view(), w, h)
				}
			}
		})
	}
}

func TestTooSmall(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(59, 20)
	require.Contains(t, ansi.Strip(b.view()), "terminal too small: need at least 60x16, have 59x20")
	b.size(100, 15)
	require.Contains(t, ansi.Strip(b.view()), "have 100x15")
	requireFits(t, b.view(), 100, 15)
}
