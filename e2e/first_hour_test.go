package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestFirstHourScreenshots walks the README's "Your first hour" in the real
// binary, as a new user types it into a shell in tmux: add a task, open the
// console, watch it run, read its green verdict, read its diff, comment on
// a line and request changes, approve the reworked task into the merge
// queue and see it land, then prune its worktree and branch. Each step's
// screen is captured for the README (docs/first-hour-*.{txt,ans}, rendered
// by docs/screenshots.sh). The agent is the scripted one, standing in for
// Claude Code.
func TestFirstHourScreenshots(t *testing.T) {
	// Without ScreenshotsEnv the walk still runs, as the end-to-end test of
	// the loop's end through the console's keys, and captures nothing.
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		// Capturing nothing, it is a test like the others, on its own
		// repository, store, binary and tmux server: it waits on the
		// console most of its time, so it runs beside them instead of
		// alone before them. Captures keep it alone, as the screenshots
		// script has always run it.
		parallel(t)
	}
	pace := 30
	f := newFixture(t, agent.Script{PaceMS: &pace, Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{
			{Path: "calc.go", Content: project.CalcFixed},
			{Path: "calc_test.go", Content: calcTestMore},
		}}},
	}}, "[notify]\nbell = false\ndesktop = false # tmux ignores them; the replay's emulator would print them\n\n[finalise]\nqueue = true\n")
	// The user's shell: the binary on PATH as `go install` puts it, in the
	// repository, with a plain prompt.
	bin := filepath.Dir(f.bin)
	raw := filepath.Join(t.TempDir(), "shell.raw")
	tm := startTerm(t, "read -r go; cd "+shellQuote(f.root)+" && PATH="+shellQuote(bin)+":\"$PATH\" PS1='$ ' exec sh", "COLORTERM=truecolor", "USER=operator")
	tm.run("pipe-pane", "-o", "-t", "main", "cat > "+shellQuote(raw))
	tm.keys("Enter")
	t.Cleanup(func() { _ = exec.Command(f.bin, "stop", "-C", f.root).Run() })
	shot := func(name string) {
		if dir != "" {
			capture(t, tm, raw, dir, name)
		}
	}
	prompt := func() {
		tm.waitScreen("the prompt", 30*time.Second, func(s string) bool { return strings.HasSuffix(strings.TrimRight(s, " \n"), "$") })
	}
	// A line is entered once the shell echoed it: until then the screen
	// still ends at the last prompt, which prompt() would take for the
	// prompt after the command (the add's id and the status table came
	// out interleaved with the next command's echo).
	typeLine := func(s string) {
		tm.typeText(s)
		tm.waitScreen("the echo of "+s, 10*time.Second, func(scr string) bool {
			return strings.HasSuffix(strings.TrimRight(scr, " \n"), "$ "+s)
		})
		tm.keys("Enter")
	}
	prompt()

	// 1. Add a task: a goal, and the project's own tests that decide when
	// it is done.
	typeLine(`orchestra-tui add --goal "Fix Add and Mul" --verify "go test ./..." --harness scripted --pipeline plan,implement`)
	prompt()
	typeLine("orchestra-tui status")
	tm.waitText(10*time.Second, "TITLE", "Fix Add and Mul", "queued")
	prompt()
	shot("first-hour-1-add")

	// 2. The console: the agent at work in its pane, its lease, its phase.
	typeLine("orchestra-tui")
	tm.waitText(60*time.Second, "implement · running", "Thinking…")
	shot("first-hour-2-console")

	// 3. The verify gate re-ran the tests: green, waiting for you.
	tm.waitText(90*time.Second, "1 awaiting review")
	tm.keys("3")
	// The history is the Verdict tab's own: "tests green" is on every
	// tab's header, and a capture before the key lands shows the Live tab.
	tm.waitText(10*time.Second, "tests green", "── history")
	shot("first-hour-3-verdict")

	// 4. The Diff tab: the files the branch changed, then the hunks.
	tm.keys("5")
	tm.waitText(20*time.Second, "2 files changed", "calc_test.go  +6", "return a + b")
	shot("first-hour-4-diff")

	// 5. A comment on a line, then C: back to implement with it.
	tm.keys("Enter")
	diffCursorTo(tm, "return a + b")
	tm.answer("c", "keep Add a plain function", 10*time.Second, "COMMENT ", " on calc.go:5")
	tm.waitScreen("the comment under its line", 10*time.Second, func(s string) bool {
		return strings.Contains(lineWith(s, "◆ operator"), "keep Add a plain function")
	})
	shot("first-hour-5-comment")
	tm.keys("C")
	tm.waitText(10*time.Second, "back to implement with 1 open comment")
	f.waitEvents(t, 120*time.Second, "the reworked task awaiting review", func(evs []headless.Record) bool {
		return count(evs, task.EvTaskAwaiting) == 2
	})
	tm.waitText(30*time.Second, "1 awaiting review")

	// 6. Approve: the merge queue merges the branch onto main in a
	// scratch worktree, runs the tests there and moves main only if they
	// pass.
	tm.keys("a")
	tm.keys("4")
	f.waitEvents(t, 120*time.Second, "the merge queue to land it", func(evs []headless.Record) bool {
		return count(evs, task.EvBranchMerged) == 1
	})
	tm.waitScreen("the task merged by the queue", 30*time.Second, func(s string) bool {
		return strings.Contains(selectedRow(s), "merged") && strings.Contains(s, "branch.merged") && strings.Contains(s, "the merge queue lands it")
	})
	shot("first-hour-6-queue")

	// 7. Back in the shell: main has the work; prune clears the task's
	// worktree and branch.
	tm.keys("q")
	detached := tm.waitText(10*time.Second, "with no agent at work")
	require.NotContains(t, detached, "0 agents keep running", "step 7 says what the README says: the engine keeps running")
	prompt()
	typeLine("git log --oneline -2")
	prompt()
	typeLine("orchestra-tui prune")
	tm.waitText(20*time.Second, "removed ")
	prompt()
	typeLine("git branch")
	tm.waitText(10*time.Second, "* main")
	prompt()
	shot("first-hour-7-prune")
	out, err := exec.Command("git", "-C", f.root, "show", "main:calc.go").Output()
	require.NoError(t, err)
	require.Equal(t, project.CalcFixed, string(out))
	// The operator's checkout of main was fast-forwarded with it.
	data, err := os.ReadFile(filepath.Join(f.root, "calc.go"))
	require.NoError(t, err)
	require.Equal(t, project.CalcFixed, string(data))
}
