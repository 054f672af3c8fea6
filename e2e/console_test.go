package e2e

import (
	"encoding/json"
	"fmt"
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

// fixture is a calc repository whose scripted harness runs the freshly
// built binary with a script of the test's choosing.
type fixture struct {
	bin    string
	root   string
	record string // the scripted agent's record_dir
	script string // the scripted agent's script file
}

// newFixture builds the binary, writes the calc project, the agent script and
// an orchestra.toml (extra is appended to it) pointing the scripted
// harness at that script.
func newFixture(t testing.TB, sc agent.Script, extra string) fixture {
	t.Helper()
	needTmux(t)
	return newRepoFixture(t, sc, extra)
}

// newRepoFixture is newFixture for tests that drive only the CLI, with no
// terminal.
func newRepoFixture(t testing.TB, sc agent.Script, extra string) fixture {
	t.Helper()
	// The repository's folder name is what the console's header shows.
	f := fixture{bin: buildBinary(t, t.TempDir()), root: filepath.Join(t.TempDir(), "calc"), record: filepath.Join(t.TempDir(), "record")}
	require.NoError(t, os.Mkdir(f.root, 0o755))
	require.NoError(t, project.WriteProject(f.root))
	sc.RecordDir = f.record
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, data, 0o644))
	f.script = script
	argv, err := json.Marshal([]string{"{{self}}", "agent", "--script", script})
	require.NoError(t, err)
	conf := fmt.Sprintf("[harness.scripted]\nargv = %s\n\n%s", argv, extra)
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "orchestra.toml"), []byte(conf), 0o644))
	return f
}

// orch runs a subcommand of the binary on the fixture's repo.
func (f fixture) orch(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(f.bin, args...)
	cmd.Dir = f.root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "orchestra-tui %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// addTask adds the calc task on the scripted harness with a pipeline.
func (f fixture) addTask(t testing.TB, title, pipeline string) {
	t.Helper()
	f.orch(t, "add", "--title", title, "--goal", project.Goal, "--verify", project.VerifyCommand,
		"--harness", "scripted", "--pipeline", pipeline)
}

// console opens the console in tmux as a person would: cd into the repo and
// run the binary, here with the engine inside it (--in-process) so quitting
// stops the agents as these tests expect and nothing outlives the test.
// When the console exits the pane says so and stays, so the test can read
// the exit status off the screen.
func (f fixture) console(t testing.TB, args ...string) *tmuxTerm {
	t.Helper()
	return f.consoleSized(t, termCols, termRows, args...)
}

// consoleSized is console in a terminal of w x h from the start. The
// console is asked to quit before its server goes, so it stops its agents
// before the test's directories go.
func (f fixture) consoleSized(t testing.TB, w, h int, args ...string) *tmuxTerm {
	t.Helper()
	cmdline := "cd " + shellQuote(f.root) + " && " + shellQuote(f.bin) + " --in-process"
	for _, a := range args {
		cmdline += " " + shellQuote(a)
	}
	cmdline += `; echo "console exited with status $?"; exec sleep 3600`
	tm := startTermSized(t, w, h, cmdline, "COLORTERM=truecolor", "USER=operator")
	t.Cleanup(func() { _ = tm.try("send-keys", "-t", "main", "q", "y") })
	return tm
}

// TestConsoleCorrectionResubmitQuit drives the real console the way an
// operator would: it watches a scripted agent come up in the live pane,
// types a correction and sees the agent receive it, nudges the stalled
// agent with resubmit and sees it get to work, finds the correction in the
// next session's brief, then quits and confirms.
func TestConsoleCorrectionResubmitQuit(t *testing.T) {
	parallel(t)
	pace := 20
	f := newFixture(t, agent.Script{PaceMS: &pace, Phases: map[task.Phase][]agent.Entry{
		// The plan session sits at its prompt having ignored its brief: a
		// stalled pane that a resubmit moves.
		task.PhasePlan: {{Behave: agent.BehaveIgnoreFirst}},
		// The implement session stays live, so its brief can be read and
		// quitting has a session to ask about.
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, "[stuck]\nafter = \"1s\"\n")
	f.addTask(t, "Fix calc", "plan,implement")

	tm := f.console(t)
	const launch = 90 * time.Second // the baseline verify compiles the calc tests first
	tm.waitText(launch, "Fix calc", "plan · running", strings.TrimSpace(agent.ReadyMarker))

	// A correction, typed into the input that c opens.
	const correction = "keep Add pure, no globals"
	tm.answer("c", correction, 5*time.Second, "correction: ")
	tm.waitText(10*time.Second, "received human decision: "+correction, "delivered to session")

	// The agent ignored its brief: the pane goes still, the console flags it
	// stuck, and r resubmits.
	tm.waitText(10*time.Second, "⚑ stuck")
	tm.keys("r")
	tm.waitText(10*time.Second, "● Phase plan, attempt 1", "resubmitted session")

	// The plan is sealed and the implement session starts; its brief is
	// the first rendered after the correction, so it must carry it.
	tm.waitText(30*time.Second, "implement · running", "● Phase implement, attempt 1")
	tm.keys("2")
	s := tm.waitText(10*time.Second, task.HeadingDecisions, task.HeadingPhasePrefix+"implement")
	decisions := s[strings.Index(s, task.HeadingDecisions):strings.Index(s, task.HeadingPhasePrefix+"implement")]
	require.Contains(t, decisions, correction, "the correction must sit under %q in the brief view:\n%s", task.HeadingDecisions, s)
	require.Contains(t, decisions, "outranks the plan", "the decisions heading is marked:\n%s", s)

	// Quitting with a session running asks first and says what happens.
	tm.keys("q")
	tm.waitText(5*time.Second, "1 session is running", "requeues")
	tm.keys("y")
	shell := tm.waitText(20*time.Second, "console exited with status 0")
	require.NotContains(t, shell, "engine: ", "the in-process engine logs to engine.log, not onto the shell:\n%s", shell)

	// What the screen showed is what happened: the agent got the correction
	// once, and the quit requeued the task for its next console.
	inputs, err := agent.ReadInputLog(f.record)
	require.NoError(t, err)
	n := 0
	for _, in := range inputs {
		if in.Kind == agent.InputDecision {
			n++
			require.Contains(t, in.Text, correction)
		}
	}
	require.Equal(t, 1, n, "the agent received the correction exactly once")
	var rows []struct{ State, Phase string }
	require.NoError(t, json.Unmarshal([]byte(f.orch(t, "status", "--json")), &rows))
	require.Len(t, rows, 1)
	require.Equal(t, "implement", rows[0].Phase)
	require.Equal(t, string(task.StateQueued), rows[0].State, "quitting requeues the running task")
}

// layoutPlain, layoutGrid and layoutZoom tell the console's layouts apart
// by their screens: one pane beside the list, the grid, one pane zoomed.
func layoutPlain(s string) bool {
	return !strings.Contains(s, "· GRID") && !strings.Contains(s, "ZOOM · ")
}

func layoutGrid(s string) bool {
	return strings.Contains(s, "· GRID") && !strings.Contains(s, "ZOOM · ")
}

func layoutZoom(s string) bool { return strings.Contains(s, "ZOOM · ") }
