package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/vt"
)

// TestMain makes the test binary run Main instead of the tests when a test
// starts it as an agent, so each test drives a real agent process in a real
// pty without building anything.
func TestMain(m *testing.M) {
	MainIfReexec()
	os.Exit(m.Run())
}

// waitLimit bounds every wait; nothing here should take more than a blink.
const waitLimit = 20 * time.Second

const calcGo = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"

// screen collects everything the agent drew and signals each change.
type screen struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// bundle is one agent process in a pty, its working and record dirs.
type bundle struct {
	t       *testing.T
	cwd     string
	rec     string
	cmd     *exec.Cmd
	pty     *os.File
	screen  *screen
	drained chan struct{} // closed when the pty reached EOF
	exited  chan struct{} // closed when the process exited
	exitErr error
}

// setup starts the agent on a script (pace 0, recording into a temp dir) in
// a working directory holding calc.go, and waits for its ready prompt.
func setup(t *testing.T, phases map[task.Phase][]Entry) *bundle {
	t.Helper()
	b := &bundle{t: t, cwd: t.TempDir(), rec: t.TempDir(), screen: &screen{changed: make(chan struct{})},
		drained: make(chan struct{}), exited: make(chan struct{})}
	require.NoError(t, os.WriteFile(filepath.Join(b.cwd, "calc.go"), []byte(calcGo), 0o644))
	zero := 0
	data, err := json.Marshal(Script{PaceMS: &zero, RecordDir: b.rec, Phases: phases})
	require.NoError(t, err)
	scriptPath := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(scriptPath, data, 0o644))

	cmd := exec.Command(os.Args[0], "--script", scriptPath)
	cmd.Dir = b.cwd
	cmd.Env = append(os.Environ(), ReexecEnv+"=1")
	b.cmd = cmd
	b.pty, err = pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	require.NoError(t, err)
	go func() {
		defer close(b.drained)
		buf := make([]byte, 32*1024)
		for {
			n, err := b.pty.Read(buf)
			b.screen.Write(buf[:n]) //nolint:errcheck // never fails
			if err != nil {
				return
			}
		}
	}()
	go func() {
		b.exitErr = cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-b.exited:
		default:
			_ = cmd.Process.Kill()
			<-b.exited
		}
		_ = b.pty.Close()
	})
	b.waitScreen(ReadyMarker, 1)
	return b
}

// waitScreen waits until the screen shows want at least n times.
func (b *bundle) waitScreen(want string, n int) {
	b.t.Helper()
	deadline := time.After(waitLimit)
	for {
		b.screen.mu.Lock()
		got := strings.Count(b.screen.buf.String(), want)
		ch := b.screen.changed
		b.screen.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-b.exited:
			// Let the last output drain before the final check.
			<-b.drained
			require.GreaterOrEqual(b.t, strings.Count(b.screen.String(), want), n, "agent exited before showing %q; screen:\n%s", want, b.screen.String())
			return
		case <-deadline:
			b.t.Fatalf("screen never showed %q %d time(s); screen:\n%s", want, n, b.screen.String())
		}
	}
}

// waitInputs waits, on fsnotify events in the record dir, until the inputs
// log holds at least n records, and returns them.
func (b *bundle) waitInputs(n int) []InputRecord {
	b.t.Helper()
	w, err := fsnotify.NewWatcher()
	require.NoError(b.t, err)
	defer w.Close()
	require.NoError(b.t, w.Add(b.rec))
	deadline := time.After(waitLimit)
	for {
		recs, err := ReadInputLog(b.rec)
		require.NoError(b.t, err)
		if len(recs) >= n {
			return recs
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			require.NoError(b.t, err)
		case <-deadline:
			b.t.Fatalf("inputs log never reached %d records; have %d", n, len(recs))
		}
	}
}

// send types raw bytes into the pty.
func (b *bundle) send(s string) {
	b.t.Helper()
	_, err := b.pty.WriteString(s)
	require.NoError(b.t, err)
}

// paste delivers text as the console does: a bracketed paste, then submit.
func (b *bundle) paste(text string) { b.send(pasteStart + text + pasteEnd + "\r") }

// stop kills the agent and waits until it has exited and its output has
// drained, so the screen is final.
func (b *bundle) stop() {
	b.t.Helper()
	require.NoError(b.t, b.cmd.Process.Kill())
	<-b.exited
	<-b.drained
}

// renderBrief writes a brief by hand from the task constants, as the brief
// renderer will, so these tests do not depend on the brief package.
func renderBrief(ph task.Phase, attempt int, verify string) string {
	return strings.Join([]string{
		task.HeadingGoal, "Make Add return the sum of its arguments.", "",
		task.HeadingAcceptance, "- go test ./... passes", "",
		task.HeadingDecisions, "None yet.", "",
		task.HeadingPhase(ph), task.Job(ph), "",
		task.LabelTask + " 01JTASK0000000000000000001",
		task.LabelAttempt + " " + strconv.Itoa(attempt),
		task.LabelArtifact + " " + task.ArtifactPath(ph),
		task.LabelSentinel + " " + task.SentinelPath,
		task.LabelVerify + " " + verify, "",
		"Schema:", "```json", task.Schema(ph), "```", "",
		task.HeadingRules, "Do not touch go.mod.", "",
		task.HeadingGitState, "Base commit abc123, clean.", "",
		task.HeadingResearch, "None.", "",
		task.HeadingPlan, "None.", "",
		task.HeadingContinuity, "This is the first session.", "",
		task.HeadingDeadEnds, "None.",
	}, "\n")
}

func readSentinel(t *testing.T, cwd string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cwd, task.SentinelPath))
	require.NoError(t, err)
	return string(data)
}

func kinds(recs []InputRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Kind)
	}
	return out
}

func TestBriefIsFollowed(t *testing.T) {
	t.Parallel()
	fixed := "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	b := setup(t, map[task.Phase][]Entry{
		task.PhaseImplement: {{Attempt: 1, Edits: []Edit{{Path: "calc.go", Content: fixed}}}},
	})
	brief := renderBrief(task.PhaseImplement, 1, "grep -q 'a + b' calc.go && echo verified-ok")
	b.paste(brief)
	b.waitScreen("● Phase implement done (attempt 1).", 1)
	b.waitScreen(ReadyMarker, 2)

	_, err := task.ReadArtifact(b.cwd, task.PhaseImplement)
	require.NoError(t, err)
	require.Equal(t, string(task.PhaseImplement), readSentinel(t, b.cwd))
	got, err := os.ReadFile(filepath.Join(b.cwd, "calc.go"))
	require.NoError(t, err)
	require.Equal(t, fixed, string(got))

	out := b.screen.String()
	require.Contains(t, out, enableBracketed)
	require.Contains(t, out, "[Pasted text #1 +")
	require.Contains(t, out, "● Update(calc.go)")
	require.Contains(t, out, "verified-ok")
	require.Contains(t, out, "✓ verify passed")

	recorded, err := os.ReadFile(filepath.Join(b.rec, "brief-implement-1-1.md"))
	require.NoError(t, err)
	require.Equal(t, brief, string(recorded))
	recs := b.waitInputs(1)
	require.Equal(t, []string{InputBrief}, kinds(recs))
	require.Equal(t, brief, recs[0].Text)

	// The agent's own account of its work: each file it wrote, in order,
	// each stamped after the write (the prompt came back after the last).
	writes, err := ReadWriteLog(b.rec)
	require.NoError(t, err)
	var paths []string
	for i, w := range writes {
		paths = append(paths, w.Path)
		require.False(t, w.At.Before(recs[0].At), "write %s stamped before the brief came", w.Path)
		if i > 0 {
			require.False(t, w.At.Before(writes[i-1].At), "writes out of order")
		}
	}
	require.Equal(t, []string{"calc.go", task.ArtifactPath(task.PhaseImplement), task.SentinelPath}, paths)
}

// A verify command that runs for a while shows, on a line redrawn each
// second, that it runs: a slow test run is work on the screen, not a still
// pane the stuck clock flags. The line is erased before the output is
// drawn, so the final screen does not depend on how long the command ran.
// The command here runs until the test lets it go.
func TestASlowVerifyShowsItRuns(t *testing.T) {
	t.Parallel()
	b := setup(t, map[task.Phase][]Entry{
		task.PhaseImplement: {{Attempt: 1, Edits: []Edit{{Path: "calc.go", Content: "package calc\n"}}}},
	})
	gate := filepath.Join(b.cwd, "gate")
	require.NoError(t, unix.Mkfifo(gate, 0o600))
	b.paste(renderBrief(task.PhaseImplement, 1, "cat gate && echo verified-ok"))
	b.waitScreen("… still running (2)", 1)
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b.waitScreen("● Phase implement done (attempt 1).", 1)
	out := b.screen.String()
	require.Contains(t, out, "… still running (1)")
	require.Less(t, strings.LastIndex(out, "still running"), strings.Index(out, "⎿  verified-ok"),
		"the beat stops before the command's output is shown")
	require.Contains(t, out, "✓ verify passed")
	// Rendered, the beats leave no trace: the output stands where they were.
	term := vt.New(80, 24, 0, nil)
	_, err = term.Write([]byte(strings.ReplaceAll(out, "\n", "\r\n")))
	require.NoError(t, err)
	screen := term.Text()
	require.NotContains(t, screen, "still running")
	require.Contains(t, screen, "● Bash(cat gate && echo verified-ok)\n  ⎿  verified-ok")
}

func TestInvalidFirstIsFixedAfterRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t, map[task.Phase][]Entry{task.PhasePlan: {{InvalidFirst: true}}})
	b.paste(renderBrief(task.PhasePlan, 2, "true"))
	b.waitScreen("● Phase plan done (attempt 2).", 1)
	b.waitScreen(ReadyMarker, 2) // drawn after the sentinel, the phase's last act

	_, err := task.ReadArtifact(b.cwd, task.PhasePlan)
	var ref *task.Refusal
	require.True(t, errors.As(err, &ref), "want a refusal, got %v", err)
	require.Equal(t, task.ReasonArtifactSchema, ref.Reason)
	require.Equal(t, "plan", readSentinel(t, b.cwd))

	// The console removes the sentinel and types the refusal back.
	require.NoError(t, os.Remove(filepath.Join(b.cwd, task.SentinelPath)))
	b.send(task.RefusalPrefix + " " + ref.Error() + "\r")
	b.waitScreen("after the refusal.", 1)
	b.waitScreen(ReadyMarker, 3)

	_, err = task.ReadArtifact(b.cwd, task.PhasePlan)
	require.NoError(t, err)
	require.Equal(t, "plan", readSentinel(t, b.cwd))
	require.Equal(t, []string{InputBrief, InputRefusal}, kinds(b.waitInputs(2)))
}

func TestDecisionIsEchoedAndLoggedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	decision := task.DecisionHeader + " keep the signature of Add unchanged"
	b.paste(decision)
	b.waitScreen("received human decision: keep the signature of Add unchanged", 1)
	b.waitScreen(ReadyMarker, 2)

	// Unreadable input is an error on screen, logged as other.
	b.send("hello\r")
	b.waitScreen("I could not read that brief", 1)

	recs := b.waitInputs(2)
	require.Equal(t, []string{InputDecision, InputOther}, kinds(recs))
	require.Equal(t, decision, recs[0].Text)
	require.Equal(t, "hello", recs[1].Text)
	require.Equal(t, 1, strings.Count(b.screen.String(), "received human decision"))
}

func TestStallWritesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, map[task.Phase][]Entry{task.PhaseImplement: {{Attempt: 1, Behave: BehaveStall}}})
	b.paste(renderBrief(task.PhaseImplement, 1, "true"))
	b.waitScreen("Thinking…", 1)

	// Input still reaches it (and is logged) but is not acted on.
	b.send("\r")
	require.Equal(t, []string{InputBrief, InputOther}, kinds(b.waitInputs(2)))
	select {
	case <-b.exited:
		t.Fatal("a stalled agent must keep running until killed")
	default:
	}
	b.stop()

	_, err := os.Stat(filepath.Join(b.cwd, task.StateDir))
	require.True(t, os.IsNotExist(err), "a stalled agent wrote %s", task.StateDir)
	out := b.screen.String()
	require.Equal(t, 1, strings.Count(out, ReadyMarker), "a stalled agent redrew its prompt:\n%s", out)
	require.NotContains(t, out, "done (attempt")
}

func TestIgnoreFirstActsOnBareSubmit(t *testing.T) {
	t.Parallel()
	b := setup(t, map[task.Phase][]Entry{task.PhasePlan: {{Behave: BehaveIgnoreFirst}}})
	b.paste(renderBrief(task.PhasePlan, 1, "true"))
	require.Equal(t, []string{InputBrief}, kinds(b.waitInputs(1)))

	b.send("\r")
	b.waitScreen("● Phase plan done (attempt 1).", 1)
	_, err := task.ReadArtifact(b.cwd, task.PhasePlan)
	require.NoError(t, err)
	out := b.screen.String()
	require.NotContains(t, out, "[Pasted text", "the ignored brief must not be drawn")
	require.Equal(t, 1, strings.Count(out, "● Phase plan, attempt 1"))
	require.Equal(t, []string{InputBrief, InputOther}, kinds(b.waitInputs(2)))
}

func TestCrashExitsMidPhase(t *testing.T) {
	t.Parallel()
	b := setup(t, map[task.Phase][]Entry{task.PhaseImplement: {{Behave: BehaveCrash}}})
	b.paste(renderBrief(task.PhaseImplement, 1, "true"))
	<-b.exited
	var exitErr *exec.ExitError
	require.True(t, errors.As(b.exitErr, &exitErr), "exit: %v", b.exitErr)
	require.Equal(t, CrashExitCode, exitErr.ExitCode())
	_, err := os.Stat(filepath.Join(b.cwd, task.SentinelPath))
	require.True(t, os.IsNotExist(err))
}

func TestFloodAndHalf(t *testing.T) {
	t.Parallel()
	b := setup(t, map[task.Phase][]Entry{task.PhaseImplement: {{
		Behave: BehaveHalf,
		Edits:  []Edit{{Path: "one.go", Content: "package calc\n"}, {Path: "two.go", Content: "package calc\n"}},
	}, {
		Attempt: 2, Behave: BehaveFlood, FloodLines: 500,
	}}})
	b.paste(renderBrief(task.PhaseImplement, 1, "true"))
	b.waitScreen("● Phase implement done (attempt 1).", 1)
	require.FileExists(t, filepath.Join(b.cwd, "one.go"))
	require.NoFileExists(t, filepath.Join(b.cwd, "two.go"))

	b.paste(renderBrief(task.PhaseImplement, 2, "true"))
	b.waitScreen("● Phase implement done (attempt 2).", 1)
	require.Contains(t, b.screen.String(), "flood 00500/00500")
}

func TestCtrlCEndsEvenAStalledAgent(t *testing.T) {
	t.Parallel()
	b := setup(t, map[task.Phase][]Entry{task.PhaseImplement: {{Behave: BehaveStall}}})
	b.paste(renderBrief(task.PhaseImplement, 1, "true"))
	b.waitScreen("Thinking…", 1)
	b.send("\x03")
	<-b.exited
	var exitErr *exec.ExitError
	require.True(t, errors.As(b.exitErr, &exitErr), "exit: %v", b.exitErr)
	require.Equal(t, exitInterrupt, exitErr.ExitCode())
}

// A stall with await_decision leaves its edits, echoes the decision that
// arrives, and only then goes silent: the demo's correction beat.
func TestStallAwaitsDecisionThenStalls(t *testing.T) {
	t.Parallel()
	half := "package calc\n\nfunc Add(a, b int) int { return a + b } // half\n"
	b := setup(t, map[task.Phase][]Entry{task.PhaseImplement: {{Attempt: 1, Behave: BehaveStall, AwaitDecision: true,
		Edits: []Edit{{Path: "calc.go", Content: half}}}}})
	b.paste(renderBrief(task.PhaseImplement, 1, "true"))
	b.waitScreen("Thinking…", 1)
	got, err := os.ReadFile(filepath.Join(b.cwd, "calc.go"))
	require.NoError(t, err)
	require.Equal(t, half, string(got), "the stall's edits come first")

	b.paste(task.DecisionHeader + " keep Add's signature")
	b.waitScreen("received human decision: keep Add's signature", 1)
	// Stalled now: the next decision is logged but not echoed.
	b.paste(task.DecisionHeader + " second")
	require.Equal(t, []string{InputBrief, InputDecision, InputDecision}, kinds(b.waitInputs(3)))
	b.stop()
	require.NotContains(t, b.screen.String(), "received human decision: second")
}
