package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// fixCalc is an implement phase that waits for a human decision, then
// fixes the calculator: green once it is let go.
func fixCalc() agent.Script {
	return agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{
		AwaitDecision: true, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}},
	}}}}
}

// parentOf returns pid's parent pid, from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, err := strconv.Atoi(f[1])
	require.NoError(t, err)
	return ppid
}

// TestSessionsRunInHostsToAGreenVerdict: with sessions in hosts, a task
// runs through its phase to a green verdict exactly as in process: the
// agent is the host's child, not the engine's; the brief, a correction and
// the operator's keys reach it; its pane reaches the console; and the host
// goes away once the session ended.
func TestSessionsRunInHostsToAGreenVerdict(t *testing.T) {
	t.Parallel()
	b := setupWith(t, fixCalc(), true)
	cl := b.dial(t, true)
	ch, unsub := cl.Subscribe()
	defer unsub()
	id := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	launched := waitEvent(t, ch, kindIs(task.EvSessionLaunched))
	var ld coord.LaunchedData
	require.NoError(t, json.Unmarshal(launched.Data, &ld))
	hostPid := parentOf(t, ld.Pid)
	require.NotEqual(t, os.Getpid(), hostPid, "the agent is the engine's own child: no host between them")
	require.Equal(t, hostPid, ld.HostPid, "the launch event names the host")
	sock := host.SocketPath(b.root, launched.SessionID)
	_, err := os.Stat(sock)
	require.NoError(t, err, "the host serves on its socket")

	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	waitPane(t, cl, ch, id, "Waiting for a human decision")
	require.NoError(t, cl.Input(id, []byte("keys through engine and host\r")))
	waitPane(t, cl, ch, id, "keys through engine and host")
	res, err := cl.Do(context.Background(), coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: "go ahead", Author: "test"})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	waitEvent(t, ch, kindIs(task.EvTaskAwaiting))
	snap := cl.Snapshot()
	require.Equal(t, task.StateAwaitingReview, snap.Tasks[0].Task.State)
	require.Equal(t, 1, snap.Tasks[0].Task.Attempt)
	waitGone(t, hostPid)
	_, err = os.Stat(sock)
	require.ErrorIs(t, err, os.ErrNotExist, "a collected host removes its socket")
}

// waitGone waits until pid has exited, through a pidfd (never a sleep).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := time.Until(deadline)
		require.Positive(t, left, "process %d is still alive", pid)
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		require.NoError(t, err)
		if n > 0 {
			return
		}
	}
}

const engineChildEnv = "ORCHESTRA_ENGINE_TEST_CHILD"

type childReq struct {
	Root   string `json:"root"`
	Script string `json:"script"`
}

// engineChild runs an engine with its sessions in hosts, in this process,
// until it is killed: what the kill -9 tests kill. It prints the time it
// started (unix nanoseconds), then "ready" once it serves.
func engineChild(raw string) int {
	start := time.Now()
	fmt.Println("started", start.UnixNano())
	var q childReq
	if err := json.Unmarshal([]byte(raw), &q); err != nil {
		fmt.Println("error", err)
		return 1
	}
	e, err := Start(context.Background(), Params{Dir: q.Root, Version: "test", Open: testOpen(q.Script, true)})
	if err != nil {
		fmt.Println("error", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	fmt.Println("ready")
	select {
	case <-e.Done():
	case <-host.AnchorGone(): // the test binary is gone: so is this engine
	}
	return 0
}

// cleanupHosts stops, at the end of the test, every session host left on
// root: the engine processes are killed with SIGKILL, which their hosts
// outlive by design.
// A failed test shows what each host logged, which a CI log otherwise
// lacks.
func cleanupHosts(t *testing.T, root string) {
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(host.Dir(root), "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", filepath.Base(l), b)
			}
		}
		host.StopAll(context.Background(), root, "test", time.Second, nil)
	})
}

// child is an engine process of this test binary.
type child struct {
	cmd   *exec.Cmd
	start time.Time // when its engine code began
}

// startChild starts an engine process on root and waits until it serves.
func startChild(t *testing.T, root, script string) *child {
	t.Helper()
	raw, err := json.Marshal(childReq{Root: root, Script: script})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), engineChildEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rd := bufio.NewReader(out)
	c := &child{cmd: cmd}
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err, "the engine process said nothing more")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "started":
			ns, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			c.start = time.Unix(0, ns)
		case len(f) == 1 && f[0] == "ready":
			go func() { _, _ = io.Copy(io.Discard, rd) }()
			return c
		default:
			t.Fatalf("the engine process said %q", line)
		}
	}
}

// kill9 kills the engine process with SIGKILL and waits for it.
func (c *child) kill9(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	_ = c.cmd.Wait()
}

// writeScript writes sc (its record dir set, no pacing) for the scripted
// harness and returns its path and the record dir.
func writeScript(t *testing.T, sc agent.Script) (script, record string) {
	t.Helper()
	record = t.TempDir()
	sc.RecordDir = record
	zero := 0
	sc.PaceMS = &zero
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	script = filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, data, 0o644))
	return script, record
}

func dialRoot(t *testing.T, root string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, PathsFor(root).Socket, Options{Watch: true, Version: "test", Kind: "console"})
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// ledger reads the task's events from the engine.
func ledger(t *testing.T, cl *Client, id task.ID) []task.Event {
	t.Helper()
	d, err := cl.Detail(context.Background(), id, coord.DetailQuery{EventsOnly: true})
	require.NoError(t, err)
	return d.Events
}

func countKind(evs []task.Event, k task.Kind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// readCast reads a recording strictly (one header, time never going back).
func readCast(t *testing.T, path string) []session.CastEvent {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, evs, err := session.ReadCast(f)
	require.NoError(t, err)
	return evs
}

// TestKilledEngineReadoptsItsSession is issue 12's Done-when: an engine is
// killed with SIGKILL mid-implement; the agent keeps running (and its
// recording keeps growing while no engine runs); a new engine takes the
// session up again at its start, with an event saying so, no requeue and
// no attempt charged; a correction through the new engine reaches the
// same agent, the task finishes green, and the recording is one file with
// no gap.
func TestKilledEngineReadoptsItsSession(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	cleanupHosts(t, root)
	script, _ := writeScript(t, fixCalc())
	e1 := startChild(t, root, script)
	cl := dialRoot(t, root)
	ch, unsub := cl.Subscribe()
	id := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	launched := waitEvent(t, ch, kindIs(task.EvSessionLaunched))
	var ld coord.LaunchedData
	require.NoError(t, json.Unmarshal(launched.Data, &ld))
	sid := launched.SessionID
	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	waitPane(t, cl, ch, id, "Waiting for a human decision")
	unsub()

	e1.kill9(t)
	<-cl.Done()
	require.NoError(t, processAlive(ld.Pid), "the agent died with its engine")

	// While no engine runs, the agent is at work and recorded: typed to
	// through its host directly, it answers, and the answer is recorded.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc, err := host.Dial(ctx, host.SocketPath(root, sid), "test")
	require.NoError(t, err)
	require.NoError(t, hc.Write([]byte("typed while no engine runs\r")))
	deadline := time.NewTimer(30 * time.Second)
	for !strings.Contains(hc.View().Text(), "typed while no engine runs") {
		select {
		case <-hc.Changed():
		case <-deadline.C:
			t.Fatalf("the agent never echoed; it shows:\n%s", hc.View().Text())
		}
	}
	deadline.Stop()
	hc.Detach()
	downtime := time.Now()

	e2 := startChild(t, root, script)
	cl2 := dialRoot(t, root)
	ch2, unsub2 := cl2.Subscribe()
	defer unsub2()
	evs := ledger(t, cl2, id)
	var adopted *task.Event
	for i := range evs {
		if evs[i].Kind == task.EvSessionAdopted {
			adopted = &evs[i]
		}
	}
	require.NotNil(t, adopted, "no session.adopted event; the ledger: %v", evs)
	require.Equal(t, sid, adopted.SessionID)
	var ad coord.AdoptedData
	require.NoError(t, json.Unmarshal(adopted.Data, &ad))
	require.Equal(t, ld.Pid, ad.Pid)
	require.Nil(t, ad.ExitCode)
	t.Logf("re-adopted %s after the new engine's start (engine start %s, adoption event %s)",
		adopted.At.Sub(e2.start), e2.start.Format(time.RFC3339Nano), adopted.At.Format(time.RFC3339Nano))
	require.Zero(t, countKind(evs, task.EvTaskRequeued), "the task was requeued")
	snap := cl2.Snapshot()
	require.Len(t, snap.Tasks, 1)
	require.Equal(t, task.StateRunning, snap.Tasks[0].Task.State)
	require.Equal(t, sid, snap.Tasks[0].SessionID)
	require.Equal(t, 1, snap.Tasks[0].Task.Attempt)

	// The same agent, through the new engine: its pane and a correction.
	waitPane(t, cl2, ch2, id, "typed while no engine runs")
	res, err := cl2.Do(context.Background(), coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: "go ahead", Author: "test"})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	waitEvent(t, ch2, kindIs(task.EvTaskAwaiting))
	snap = cl2.Snapshot()
	require.Equal(t, task.StateAwaitingReview, snap.Tasks[0].Task.State)
	require.Equal(t, 1, snap.Tasks[0].Task.Attempt, "an attempt was charged for the engine's death")
	require.NotNil(t, snap.Tasks[0].Verdict)
	require.Equal(t, verify.StatusOK, snap.Tasks[0].Verdict.Status, "the verdict is not green")
	evs = ledger(t, cl2, id)
	require.Equal(t, 1, countKind(evs, task.EvSessionLaunched), "the agent was relaunched")
	require.Zero(t, countKind(evs, task.EvTaskRequeued))

	// One recording, no gap: what the agent printed while no engine ran
	// is in it between what came before and what came after.
	ce := readCast(t, filepath.Join(root, task.StateDir, "runs", string(id), sid+".cast"))
	where := func(s string) int {
		for i, e := range ce {
			if e.Code == "o" && strings.Contains(e.Data, s) {
				return i
			}
		}
		return -1
	}
	during, after := where("typed while no engine runs"), where("received human decision: go ahead")
	require.Positive(t, during, "the output while no engine ran is not recorded")
	require.Greater(t, after, during)
	_ = downtime
}

// TestExitWhileNoEngineRunsIsReportedOnReadoption: the engine is killed
// with SIGKILL; while none runs, the agent finishes its phase and exits;
// the next engine takes the session up, its event names the exit status
// and time, and the task proceeds as on any exit: the sentinel and valid
// artifact it left finish the phase, and the verdict is green.
func TestExitWhileNoEngineRunsIsReportedOnReadoption(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	cleanupHosts(t, root)
	script, _ := writeScript(t, fixCalc())
	e1 := startChild(t, root, script)
	cl := dialRoot(t, root)
	ch, unsub := cl.Subscribe()
	id := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	launched := waitEvent(t, ch, kindIs(task.EvSessionLaunched))
	sid := launched.SessionID
	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	waitPane(t, cl, ch, id, "Waiting for a human decision")
	unsub()
	e1.kill9(t)
	<-cl.Done()

	// No engine: the decision is typed through the host itself, the agent
	// finishes the phase, and then it is stopped.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc, err := host.Dial(ctx, host.SocketPath(root, sid), "test")
	require.NoError(t, err)
	require.NoError(t, hc.SendChecked(ctx, worker.DecisionText("finish without an engine")))
	sentinel := filepath.Join(root, task.StateDir, "worktrees", string(id), task.SentinelPath)
	deadline := time.NewTimer(60 * time.Second)
	for !strings.Contains(hc.View().Text(), "Phase implement done") {
		select {
		case <-hc.Changed():
		case <-deadline.C:
			t.Fatalf("the agent never finished; it shows:\n%s", hc.View().Text())
		}
	}
	deadline.Stop()
	require.Eventually(t, func() bool { _, err := os.Stat(sentinel); return err == nil }, 30*time.Second, 10*time.Millisecond)
	before := time.Now()
	require.NoError(t, hc.Stop(time.Second))
	code := hc.ExitCode() // 128 + the signal that ended it (a stop begins with SIGHUP, then SIGTERM)
	require.Greater(t, code, 128)
	hc.Detach() // the exit stays with the host, uncollected

	e2 := startChild(t, root, script)
	cl2 := dialRoot(t, root)
	ch2, unsub2 := cl2.Subscribe()
	defer unsub2()
	evs := ledger(t, cl2, id)
	var ad coord.AdoptedData
	found := false
	for _, e := range evs {
		if e.Kind == task.EvSessionAdopted {
			found = true
			require.NoError(t, json.Unmarshal(e.Data, &ad))
			require.Contains(t, e.Text, fmt.Sprintf("exited with code %d", code))
		}
	}
	require.True(t, found, "no session.adopted event: %v", evs)
	require.NotNil(t, ad.ExitCode)
	require.Equal(t, code, *ad.ExitCode)
	require.False(t, ad.ExitedAt.Before(before.Add(-time.Second)), "exit time %s is before the stop (%s)", ad.ExitedAt, before)
	require.True(t, ad.ExitedAt.Before(e2.start), "exit time %s is not before the new engine (%s)", ad.ExitedAt, e2.start)

	waitEvent(t, ch2, kindIs(task.EvTaskAwaiting))
	snap := cl2.Snapshot()
	require.Equal(t, task.StateAwaitingReview, snap.Tasks[0].Task.State)
	require.Equal(t, 1, snap.Tasks[0].Task.Attempt)
	require.Equal(t, verify.StatusOK, snap.Tasks[0].Verdict.Status)
	waitGone(t, ad.HostPid)
}

// TestAHostNotTakenUpIsStopped: an engine is killed while a session's
// launch is still unconfirmed; the next engine requeues the task (not
// charged) and stops that session's host with its agent, leaving nothing
// behind.
func TestAHostNotTakenUpIsStopped(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	cleanupHosts(t, root)
	script, _ := writeScript(t, agent.Script{})
	e1 := startChild(t, root, script)
	cl := dialRoot(t, root)
	ch, unsub := cl.Subscribe()
	res, err := cl.Do(context.Background(), coord.Command{Kind: coord.CmdAdd, Task: &task.Task{
		Title: "never ready", Goal: "sit", Verify: "true", Harness: "noready", Pipeline: task.Pipeline{task.PhaseImplement},
	}})
	require.NoError(t, err)
	launched := waitEvent(t, ch, kindIs(task.EvSessionLaunched))
	unsub()
	var ld coord.LaunchedData
	require.NoError(t, json.Unmarshal(launched.Data, &ld))
	hostPid := parentOf(t, ld.Pid)
	e1.kill9(t)
	require.NoError(t, processAlive(ld.Pid))

	startChild(t, root, script)
	waitGone(t, hostPid)
	waitGone(t, ld.Pid)
	_, err = os.Stat(host.SocketPath(root, launched.SessionID))
	require.ErrorIs(t, err, os.ErrNotExist)
	cl2 := dialRoot(t, root)
	evs := ledger(t, cl2, res.TaskID)
	require.Zero(t, countKind(evs, task.EvSessionAdopted), "an unconfirmed session was taken up")
	found := false
	for _, e := range evs {
		if e.Kind == task.EvRefusal && e.Reason == task.ReasonLeaseOrphaned && strings.Contains(e.Text, "is not counted") {
			found = true
		}
	}
	require.True(t, found, "the task was not requeued free of charge: %v", evs)
}

// kept is an engine's session left running in its host by `stop
// --keep-agents`: the agent waits for a human decision.
type kept struct {
	root, script, record string
	id                   task.ID
	session              string
	launched             coord.LaunchedData
	lines                []string // what the stop said
}

// keptAgent starts an engine on a calc project, runs a task whose agent
// waits for a decision, and stops the engine keeping that agent.
func keptAgent(t *testing.T) kept {
	t.Helper()
	k := kept{root: t.TempDir()}
	require.NoError(t, project.WriteProject(k.root))
	cleanupHosts(t, k.root)
	k.script, k.record = writeScript(t, fixCalc())
	e1 := startChild(t, k.root, k.script)
	cl := dialRoot(t, k.root)
	ch, unsub := cl.Subscribe()
	defer unsub()
	k.id = addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	launched := waitEvent(t, ch, kindIs(task.EvSessionLaunched))
	k.session = launched.SessionID
	require.NoError(t, json.Unmarshal(launched.Data, &k.launched))
	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	waitPane(t, cl, ch, k.id, "Waiting for a human decision")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var err error
	k.lines, err = cl.StopKeepingAgents(ctx)
	require.NoError(t, err)
	require.NoError(t, e1.cmd.Wait(), "the engine did not stop cleanly")
	return k
}

// TestStopKeepingAgentsHandsThemToTheNextEngine: `stop --keep-agents` (an
// upgrade of the binary) ends the engine process cleanly and leaves the
// agent running in its host; the next engine takes it up, and the task
// finishes green on the same agent with its attempt unchanged.
func TestStopKeepingAgentsHandsThemToTheNextEngine(t *testing.T) {
	t.Parallel()
	k := keptAgent(t)
	root, script, id := k.root, k.script, k.id
	require.Len(t, k.lines, 1)
	require.Contains(t, k.lines[0], "left running in its session host")
	require.NoError(t, processAlive(k.launched.Pid), "the agent stopped with its engine")
	require.NoError(t, processAlive(k.launched.HostPid), "the host stopped with its engine")

	startChild(t, root, script)
	cl2 := dialRoot(t, root)
	ch2, unsub2 := cl2.Subscribe()
	defer unsub2()
	evs := ledger(t, cl2, id)
	require.Equal(t, 1, countKind(evs, task.EvSessionDetached), "%v", evs)
	require.Equal(t, 1, countKind(evs, task.EvSessionAdopted), "%v", evs)
	require.Zero(t, countKind(evs, task.EvTaskRequeued))
	res, err := cl2.Do(context.Background(), coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: "go ahead", Author: "test"})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	waitEvent(t, ch2, kindIs(task.EvTaskAwaiting))
	snap := cl2.Snapshot()
	require.Equal(t, 1, snap.Tasks[0].Task.Attempt)
	require.Equal(t, verify.StatusOK, snap.Tasks[0].Verdict.Status)
	require.Equal(t, 1, countKind(ledger(t, cl2, id), task.EvSessionLaunched), "the agent was relaunched")
}
