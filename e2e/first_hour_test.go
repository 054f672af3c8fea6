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
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestFirstHourScreenshots walks the README's "Your first hour" in the real
// binary, as a new user types it into a shell in tmux: add a task, open the
// console, watch it run, read its green verdict, approve it, merge it, then
// prune its worktree and branch. Each step's screen is captured for the
// README (docs/first-hour-*.{txt,ans}, rendered by docs/screenshots.sh). The
// agent is the scripted one, standing in for Claude Code.
func TestFirstHourScreenshots(t *testing.T) {
	// Without ScreenshotsEnv the walk still runs, as the end-to-end test of
	// the loop's end through the console's keys, and captures nothing.
	dir := os.Getenv(ScreenshotsEnv)
	pace := 30
	f := newFixture(t, agent.Script{PaceMS: &pace, Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, "[notify]\nbell = false\ndesktop = false # tmux ignores them; the replay's emulator would print them\n")
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
	typeLine := func(s string) {
		tm.typeText(s)
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
	tm.waitText(10*time.Second, "tests green")
	shot("first-hour-3-verdict")

	// 4. Approve: it says where the work is and how to merge it.
	tm.keys("a")
	tm.keys("4")
	tm.waitText(10*time.Second, "merge it with", "approved. The work is on branch")
	shot("first-hour-4-approve")

	// 5. Merge, after a question.
	tm.keys("M")
	tm.waitText(5*time.Second, "Merge task")
	tm.keys("y")
	tm.waitText(10*time.Second, "by fast-forward")
	shot("first-hour-5-merge")

	// 6. Back in the shell: main has the work; prune clears the task's
	// worktree and branch.
	tm.keys("q")
	detached := tm.waitText(10*time.Second, "with no agent at work")
	require.NotContains(t, detached, "0 agents keep running", "step 6 says what the README says: the engine keeps running")
	prompt()
	typeLine("git log --oneline -2")
	prompt()
	typeLine("orchestra-tui prune")
	tm.waitText(20*time.Second, "removed ")
	prompt()
	typeLine("git branch")
	tm.waitText(10*time.Second, "* main")
	prompt()
	shot("first-hour-6-prune")
	out, err := exec.Command("git", "-C", f.root, "show", "main:calc.go").Output()
	require.NoError(t, err)
	require.Equal(t, project.CalcFixed, string(out))
}
