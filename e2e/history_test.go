package e2e

import (
	"context"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
)

// A repository whose tasks have all ended opens on its history: every task
// is listed, the failed ones first (a human has to retry them), and the
// ended filter lists them too. Before, the console read the snapshot before
// the coordinator had loaded the store and showed "0 tasks".
func TestConsoleListsAnAllEndedRepository(t *testing.T) {
	parallel(t)
	// The agent does nothing in implement, so the verify gate stays red and
	// with one attempt allowed every task fails.
	f := newFixture(t, agent.Script{}, "[lease]\nmax_attempts = 1\n")
	titles := []string{"Fix add", "Fix mul", "Fix sub"}
	for _, title := range titles {
		f.addTask(t, title, "implement")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, f.bin, "run", "--headless")
	run.Dir = f.root
	out, err := run.CombinedOutput()
	require.Error(t, err, "every task fails, so run --headless exits non-zero:\n%s", out)
	status := f.orch(t, "status")
	require.Len(t, regexp.MustCompile(`failed +implement`).FindAllString(status, -1), 3, "status lists three failed tasks:\n%s", status)

	tm := f.console(t)
	s := tm.waitText(30*time.Second, "3 tasks", "0 live", "TASKS 3/3")
	for _, title := range titles {
		require.Contains(t, s, title, "every ended task is listed:\n%s", s)
	}
	require.NotContains(t, s, "no tasks yet")

	// f cycles all → live → attention → ended.
	tm.keys("f")
	tm.waitText(5*time.Second, "TASKS 0/3 · filter live", "no live tasks")
	tm.keys("f")
	tm.waitText(5*time.Second, "TASKS 3/3 · filter attention")
	tm.keys("f")
	s = tm.waitText(5*time.Second, "TASKS 3/3 · filter ended")
	for _, title := range titles {
		require.Contains(t, s, title)
	}
	tm.keys("q")
	tm.waitText(10*time.Second, "console exited with status 0")
}

// A `demo --keep` directory opens on the demo's finished task, in the
// console a user gets by default: attached to the repository's engine.
func TestConsoleListsAKeptDemo(t *testing.T) {
	parallel(t)
	needTmux(t)
	bin := buildBinary(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	demo := exec.CommandContext(ctx, bin, "demo", "--headless", "--fast", "--keep")
	demo.Env = append(demo.Environ(), "TMPDIR="+t.TempDir())
	out, err := demo.CombinedOutput()
	require.NoError(t, err, "demo: %s", out)
	m := regexp.MustCompile(`the calc repository is (\S+)\)`).FindSubmatch(out)
	require.NotNil(t, m, "the demo says where it kept the repository:\n%s", out)
	root := string(m[1])
	// The console attaches to the repository's engine, started in the
	// background as for any user; stop it with the test.
	t.Cleanup(func() {
		out, err := exec.Command(bin, "stop", "-C", root).CombinedOutput()
		require.NoError(t, err, "orchestra-tui stop: %s", out)
	})

	tm := startTerm(t, "cd "+shellQuote(root)+" && "+shellQuote(bin)+`; echo "console exited with status $?"; exec sleep 3600`, "USER=operator")
	s := tm.waitText(30*time.Second, "1 task ·", "TASKS 1/1", "Fix calc", "completed")
	require.NotContains(t, s, "no tasks yet")
	tm.keys("q")
	tm.waitText(10*time.Second, "console exited with status 0")
}
