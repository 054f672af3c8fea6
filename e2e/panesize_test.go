package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// probeScript is an agent that only knows its terminal: on start and on
// every SIGWINCH it reads its size with stty, logs it, and draws a box of
// exactly that size with the size written inside. The console shows the
// pane's top-left corner at the pane's top-left, so the box's corners land
// on the pane's corners only when the pty has the pane's inner size.
const probeScript = `stty -echo
draw() {
	set -- $(stty size); r=$1; c=$2
	line=$(printf '%*s' $((c - 2)) '' | sed 's/ /─/g')
	printf '\033[H\033[2J┌%s┐' "$line"
	i=2; while [ $i -lt $r ]; do printf '\033[%d;1H│\033[%d;%dH│' $i $i $c; i=$((i + 1)); done
	printf '\033[%d;1H└%s┘' $r "$line"
	printf '\033[2;3HPROBE READY SIZE %sx%s' $c $r
	echo "$c $r" >> "$PROBE_LOG"
}
trap draw WINCH
draw
while :; do sleep 0.1; done
`

// probeHarness is the probe as an orchestra.toml harness.
func probeHarness(log string) string {
	argv, _ := json.Marshal([]string{"/bin/sh", "-c", probeScript})
	return fmt.Sprintf(`[harness.probe]
argv = %s
env = ["PATH"]
delivery = "type"
ready = "PROBE READY"
quiet = "200ms"
set_env = { PROBE_LOG = %q }

[lease]
length = "30m"

[stuck]
after = "30m"
`, argv, log)
}

// probeBox finds the probe's box on a plain screen: its top-left corner
// (column, row), its size, and the size the probe wrote inside it.
type probeBox struct {
	x, y, cols, rows int
	said             string
}

func findBox(screen string) (probeBox, bool) {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	var b probeBox
	found := false
	for y, l := range lines {
		if i := strings.Index(l, "┌"); i >= 0 && strings.Contains(l, "┐") {
			b.x, b.y = ansi.StringWidth(l[:i]), y
			b.cols = ansi.StringWidth(l[i:strings.LastIndex(l, "┐")]) + 1
			found = true
			break
		}
	}
	if !found {
		return b, false
	}
	for y := b.y + 1; y < len(lines); y++ {
		l := lines[y]
		if i := strings.Index(l, "PROBE READY SIZE "); i >= 0 {
			b.said = strings.Fields(l[i+len("PROBE READY SIZE "):])[0]
		}
		if strings.Contains(l, "└") && strings.Contains(l, "┘") {
			b.rows = y - b.y + 1
			return b, true
		}
	}
	return b, false
}

// castSize is the size a recording ends at: its header's, then each "r".
func castSize(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h, evs, err := session.ReadCast(f)
	require.NoError(t, err)
	size := fmt.Sprintf("%dx%d", h.Width, h.Height)
	for _, e := range evs {
		if e.Code == "r" {
			size = e.Data
		}
	}
	return size
}

// The agent's pty has exactly the size of the pane that shows it, in a
// 100x30 and a 200x50 console, after every layout change: launch, the
// terminal resized, another tab and back, layoutGrid, zoom and back. A probe in
// the session reads its size with stty on every SIGWINCH and draws a box of
// that size; the box must end on the pane's bottom-right corner, which is
// the body's (the pane is the rightmost and lowest part of the body), and
// the session's recording must end at the same size.
func TestPtyHasThePaneSize(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{100, 30}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			parallel(t)
			log := filepath.Join(t.TempDir(), "sizes.log")
			f := newFixture(t, agent.Script{}, probeHarness(log))
			f.orch(t, "add", "--title", "probe", "--goal", "know the terminal", "--verify", "true",
				"--harness", "probe", "--pipeline", "implement")
			w, h := size[0], size[1]
			tm := f.consoleSized(t, w, h)

			// check waits until the box ends at (right, bottom) and is
			// whole, then checks the probe's own size and the recording.
			// layout tells the frames of the step's layout from the
			// frames before its key was read.
			check := func(step string, layout func(string) bool, right, bottom int) {
				t.Helper()
				var box probeBox
				tm.waitScreen(step+": the probe's box on the pane's corner", 60*time.Second, func(s string) bool {
					b, ok := findBox(s)
					box = b
					return ok && layout(s) && b.x+b.cols-1 == right && b.y+b.rows-1 == bottom &&
						b.said == fmt.Sprintf("%dx%d", b.cols, b.rows)
				})
				sizes, err := os.ReadFile(log)
				require.NoError(t, err)
				ls := strings.Split(strings.TrimSpace(string(sizes)), "\n")
				require.Equal(t, fmt.Sprintf("%d %d", box.cols, box.rows), ls[len(ls)-1], "%s: stty inside the session", step)
				casts, err := filepath.Glob(filepath.Join(f.root, ".orchestra", "runs", "*", "*.cast"))
				require.NoError(t, err)
				require.Len(t, casts, 1)
				require.Equal(t, box.said, castSize(t, casts[0]), "%s: the recording's last size", step)
				t.Logf("%s: pty %s", step, box.said)
			}
			// The pane is the lowest, rightmost part of the body, which
			// ends above the status and hint lines.
			check("launch", layoutPlain, w-1, h-3)
			tm.resize(w-13, h-5)
			check("terminal resized", layoutPlain, w-14, h-8)
			tm.resize(w, h)
			check("terminal resized back", layoutPlain, w-1, h-3)
			tm.keys("2")
			tm.waitText(10*time.Second, "Current phase")
			tm.keys("1")
			check("another tab and back", func(s string) bool { return layoutPlain(s) && !strings.Contains(s, "Current phase") }, w-1, h-3)
			tm.keys("g")
			check("grid", layoutGrid, w-1, h-3)
			tm.keys("z")
			check("zoom", layoutZoom, w-1, h-2)
			tm.keys("C-]")
			check("zoom left", layoutGrid, w-1, h-3)
			tm.keys("g")
			check("grid left", layoutPlain, w-1, h-3)
		})
	}
}

// The same with the real Claude Code against the scripted model server in
// a second pane: in grid mode the two cells have one size, so Claude
// Code's pty (its recording's last size) must equal the probe's, and
// zoomed on it, the whole terminal but the status line.
func TestClaudePtyHasThePaneSize(t *testing.T) {
	t.Parallel()
	claude := claudecli.Require(t)
	for _, size := range [][2]int{{100, 30}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			parallel(t)
			srv := modelstub.New([]modelstub.Rule{{
				Name: "wait", When: func(modelstub.Request) bool { return true },
				Reply: func(modelstub.Request) modelstub.Reply {
					return modelstub.Reply{Text: "Waiting for the operator."}
				},
			}})
			srv.Logf = t.Logf
			base, err := srv.Start()
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close() })
			// Not t.TempDir: Claude Code may still be writing in it while
			// the test's cleanup runs.
			home, err := os.MkdirTemp("", "claude-home-")
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(home) })
			spec := modelstub.Harness(config.Default().Harness["claude"], claude, home, base)
			var conf strings.Builder
			require.NoError(t, toml.NewEncoder(&conf).Encode(map[string]any{"harness": map[string]any{"claude": spec}}))

			log := filepath.Join(t.TempDir(), "sizes.log")
			f := newFixture(t, agent.Script{}, probeHarness(log)+"\n"+conf.String())
			f.orch(t, "add", "--title", "probe", "--goal", "know the terminal", "--verify", "true",
				"--harness", "probe", "--pipeline", "implement")
			id := strings.TrimSpace(f.orch(t, "add", "--title", "claude", "--goal", "wait", "--verify", "true",
				"--harness", "claude", "--pipeline", "implement"))
			require.NoError(t, modelstub.SeedHome(home, filepath.Join(f.root, ".orchestra", "worktrees", id)))
			w, h := size[0], size[1]
			tm := f.consoleSized(t, w, h)
			tm.waitText(90*time.Second, "2 live")
			claudeCast := func() string {
				casts, err := filepath.Glob(filepath.Join(f.root, ".orchestra", "runs", id, "*.cast"))
				require.NoError(t, err)
				require.Len(t, casts, 1)
				return castSize(t, casts[0])
			}
			// Claude Code is up once its prompt is on the screen.
			tm.keys("g")
			var box probeBox
			tm.waitScreen("grid: the probe's box on its cell's corner and Claude Code's prompt", 90*time.Second, func(s string) bool {
				b, ok := findBox(s)
				box = b
				return ok && strings.Contains(s, "· GRID") && strings.Contains(s, "❯") && b.x == 0 && b.y == 2 &&
					b.said == fmt.Sprintf("%dx%d", b.cols, b.rows) && claudeCast() == b.said
			})
			t.Logf("grid: both ptys %s", box.said)
			// Zoomed on Claude Code: the whole terminal but one line.
			tm.keys("j", "z")
			want := fmt.Sprintf("%dx%d", w, h-1)
			tm.waitScreen("zoomed on Claude Code", 60*time.Second, func(s string) bool {
				return strings.Contains(s, "ZOOM · ") && strings.Contains(s, "claude") && claudeCast() == want
			})
			tm.keys("C-]")
			tm.waitScreen("back in the grid", 60*time.Second, func(s string) bool {
				return strings.Contains(s, "· GRID") && !strings.Contains(s, "ZOOM · ") && claudeCast() == box.said
			})
			t.Logf("zoom: Claude Code's pty %s, and back to %s", want, box.said)
		})
	}
}
