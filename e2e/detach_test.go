package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// attachTerm opens the console as a person does: the bare binary in the
// repository, which attaches to the engine (starting it first). exec makes
// the console the pane's own process, so the test can signal it.
func (f fixture) attachTerm(t *testing.T) *tmuxTerm {
	t.Helper()
	return f.attachTermSized(t, termCols, termRows)
}

// attachTermSized is attachTerm in a terminal of w x h.
func (f fixture) attachTermSized(t *testing.T, w, h int) *tmuxTerm {
	t.Helper()
	return startTermSized(t, w, h, "cd "+shellQuote(f.root)+" && exec "+shellQuote(f.bin), "COLORTERM=truecolor", "USER=operator")
}

// attachTermStays is attachTerm with the pane kept after the console exits,
// so what it printed can be read.
func (f fixture) attachTermStays(t *testing.T) *tmuxTerm {
	t.Helper()
	return startTerm(t, "cd "+shellQuote(f.root)+" && "+shellQuote(f.bin)+`; echo "console exited with status $?"; exec sleep 3600`,
		"COLORTERM=truecolor", "USER=operator")
}

// TestAgentsOutliveTheConsole: a console attached in tmux ends mid-implement
// (kill -9, the terminal closing, q); the agent keeps running, a new
// console shows the same pane as a replay of the session's recording, and
// the task finishes green on the same attempt.
func TestAgentsOutliveTheConsole(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"SIGKILL", "SIGHUP", "q"} {
		t.Run(end, func(t *testing.T) {
			parallel(t)
			fix := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
			// The implement session sits at its prompt having ignored its
			// brief until it is resubmitted: a live agent whose screen is
			// still, so two consoles can be compared with its recording.
			f := newFixture(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
				task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst, Edits: fix}},
			}}, "")
			t.Cleanup(func() { _, _ = runIn(f, "stop") })
			f.addTask(t, "Fix calc", "implement")

			var one *tmuxTerm
			if end == "q" {
				one = f.attachTermStays(t)
			} else {
				one = f.attachTerm(t)
			}
			one.waitText(90*time.Second, "implement · running", strings.TrimSpace(agent.ReadyMarker))
			waitLedger(t, f.root, task.EvBriefDelivered)
			id, pid := launchedAgent(t, f.root)
			castPath := castOf(t, f.root, id)
			before := fileSize(t, castPath)

			switch end {
			case "SIGKILL":
				require.NoError(t, syscall.Kill(one.panePID(), syscall.SIGKILL))
			case "SIGHUP":
				// The terminal closing: tmux hangs the pane up.
				require.NoError(t, syscall.Kill(one.panePID(), syscall.SIGHUP))
			case "q":
				one.keys("q")
				one.waitText(10*time.Second, "detached: 1 agent keeps running", "console exited with status 0")
			}
			require.NoError(t, alive(pid), "the agent died with the console")

			two := f.attachTerm(t)
			screen := two.waitText(30*time.Second, "implement · running", strings.TrimSpace(agent.ReadyMarker))
			requireShowsReplay(t, screen, castPath)
			require.NoError(t, alive(pid))

			// The agent goes on working under the new console.
			out, err := runIn(f, "resubmit", string(id))
			require.NoError(t, err, out)
			two.waitText(90*time.Second, "1 awaiting review")
			require.Greater(t, fileSize(t, castPath), before, "the recording kept growing")

			st, err := sqlite.Open(sqlite.DefaultPath(f.root))
			require.NoError(t, err)
			defer st.Close()
			tk, err := st.TaskGet(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, task.StateAwaitingReview, tk.State)
			require.Equal(t, 1, tk.Attempt, "the console's end cost no attempt")
			evs, err := st.EventList(context.Background(), store.EventListParams{TaskID: id})
			require.NoError(t, err)
			for _, e := range evs {
				require.NotEqual(t, task.EvTaskRequeued, e.Kind, "the task was never requeued: %s", e.Text)
			}
		})
	}
}

// runIn runs a subcommand on the fixture's repository.
func runIn(f fixture, args ...string) (string, error) {
	cmd := execIn(f, args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitLedger waits until the repository's ledger has an event of kind.
func waitLedger(t *testing.T, root string, kind task.Kind) {
	t.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	tick := time.NewTicker(lookInterval)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		evs, err := st.EventList(context.Background(), store.EventListParams{})
		require.NoError(t, err)
		for _, e := range evs {
			if e.Kind == kind {
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no %s event in the ledger after a minute", kind)
		}
	}
}

// launchedAgent returns the task and the pid of its live agent from the
// ledger's session.launched event.
func launchedAgent(t *testing.T, root string) (task.ID, int) {
	t.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	evs, err := st.EventList(context.Background(), store.EventListParams{})
	require.NoError(t, err)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == task.EvSessionLaunched {
			var d coord.LaunchedData
			require.NoError(t, json.Unmarshal(evs[i].Data, &d))
			return evs[i].TaskID, d.Pid
		}
	}
	t.Fatal("no session.launched event in the ledger")
	return "", 0
}

func castOf(t *testing.T, root string, id task.ID) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, task.StateDir, "runs", string(id), "*.cast"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// alive returns nil when pid is a running process, not a zombie.
func alive(pid int) error {
	if err := syscall.Kill(pid, 0); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconvI(pid), "stat"))
	if err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && len(b) > i+2 && b[i+2] == 'Z' {
			return syscall.ESRCH
		}
	}
	return nil
}

// requireShowsReplay checks that every line of the session's screen, as a
// replay of its recording draws it, is on the console's screen.
func requireShowsReplay(t *testing.T, screen, castPath string) {
	t.Helper()
	fh, err := os.Open(castPath)
	require.NoError(t, err)
	defer fh.Close()
	h, events, err := session.ReadCast(fh)
	require.NoError(t, err)
	v := session.Replay(events, h.Width, h.Height)
	n := 0
	for _, line := range strings.Split(v.Text(), "\n") {
		line = strings.TrimRight(line, " ")
		if strings.TrimSpace(line) == "" {
			continue
		}
		n++
		require.Contains(t, screen, line, "the new console's pane differs from the recording's replay")
	}
	require.Positive(t, n, "the replay drew nothing")
}

func strconvI(i int) string { return strconv.Itoa(i) }

func execIn(f fixture, args ...string) *exec.Cmd {
	cmd := exec.Command(f.bin, args...)
	cmd.Dir = f.root
	return cmd
}

// stalledUnderConsole starts a task whose implement agent thinks until a
// human decision comes, and a console attached to its engine that shows it.
func stalledUnderConsole(t *testing.T) (fixture, *tmuxTerm) {
	t.Helper()
	f := newFixture(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall, AwaitDecision: true}},
	}}, "")
	t.Cleanup(func() { _, _ = runIn(f, "stop") })
	f.addTask(t, "Fix calc", "implement")
	one := f.attachTerm(t)
	one.waitText(90*time.Second, "implement · running", "Thinking…")
	return f, one
}

// TestTwoConsolesSeeTheSameRun: two consoles attached at once; a correction
// typed in one reaches the agent and shows in the other's pane and event
// log.
func TestTwoConsolesSeeTheSameRun(t *testing.T) {
	parallel(t)
	f, one := stalledUnderConsole(t)
	two := f.attachTerm(t)
	two.waitText(30*time.Second, "implement · running", "Thinking…")

	const correction = "keep Add pure, no globals"
	one.answer("c", correction, 5*time.Second, "correction: ")
	one.waitText(10*time.Second, "received human decision: "+correction)
	two.waitText(10*time.Second, "received human decision: "+correction)
	two.keys("4")
	two.waitText(10*time.Second, "decision.recorded", "Human decision by operator: keep Add", "decision.delivered")
}

// TestForegroundEngineIgnoresHangupAndStopsOnTerm: the engine a service
// manager runs survives SIGHUP and stops cleanly, exit 0, on SIGTERM.
func TestForegroundEngineIgnoresHangupAndStopsOnTerm(t *testing.T) {
	parallel(t)
	f := newRepoFixture(t, agent.Script{}, "")
	cmd := execIn(f, "engine", "--foreground")
	var logb strings.Builder
	cmd.Stderr = &logb
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitAnswers(t, f)
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	waitAnswers(t, f)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, logb.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the engine did not stop on SIGTERM; its log:\n%s", logb.String())
	}
	out, err := runIn(f, "stop")
	require.NoError(t, err, out)
	require.Contains(t, out, "no engine runs")
}

// waitAnswers waits until the repository's engine answers a command.
func waitAnswers(t *testing.T, f fixture) {
	t.Helper()
	tick := time.NewTicker(lookInterval)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		// extend needs a running engine: with one, it fails on the task
		// id instead of asking for an engine.
		out, _ := runIn(f, "extend", "NOPE", "1m")
		if strings.Contains(out, `no task matches "NOPE"`) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the engine never answered; last: %s", out)
		}
	}
}

// TestConsoleStartsALostEngineAgain: the engine under an attached console
// is killed with SIGKILL mid-implement; the console says so, starts a new
// engine, which takes the live agent up, and shows the run again, with no
// attempt charged.
func TestConsoleStartsALostEngineAgain(t *testing.T) {
	parallel(t)
	f, one := stalledUnderConsole(t)
	waitLedger(t, f.root, task.EvBriefDelivered)
	id, pid := launchedAgent(t, f.root)
	lock := engine.PathsFor(f.root).Lock
	first := engine.LockHolder(lock)
	require.Positive(t, first)

	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	waitLedger(t, f.root, task.EvSessionAdopted)
	second := engine.LockHolder(lock)
	require.NotEqual(t, first, second, "a new engine holds the repository")
	require.NoError(t, alive(one.panePID()), "the console stayed")
	require.NoError(t, alive(pid), "the agent outlived its engine")
	one.keys("4")
	one.waitText(30*time.Second, "implement · running", "session.adopted", "after engine pid "+strconv.Itoa(first)+" went")

	st, err := sqlite.Open(sqlite.DefaultPath(f.root))
	require.NoError(t, err)
	defer st.Close()
	tk, err := st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 1, tk.Attempt, "the engine's death cost no attempt")
}
