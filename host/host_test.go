package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// TestMain lets the test binary act as a session host (`host ...`, as the
// launcher runs it) and as an engine that launches one and then waits to
// be killed (spawnEnv).
// Every host these tests start ends with this test binary (AnchorEnv),
// even when it dies of its timeout before a cleanup runs.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "host" {
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
	if raw := os.Getenv(spawnEnv); raw != "" {
		os.Exit(spawnAndWait(raw))
	}
	if os.Getenv(AnchorEnv) == "" {
		os.Setenv(AnchorEnv, strconv.Itoa(os.Getpid()))
	}
	os.Exit(m.Run())
}

const spawnEnv = "ORCHESTRA_HOST_TEST_SPAWN"

type spawnReq struct {
	Root   string `json:"root"`
	Params launch `json:"params"`
}

// spawnAndWait launches a host, prints its socket and the agent's pid, and
// waits for the test to kill this process.
func spawnAndWait(raw string) int {
	var q spawnReq
	if err := json.Unmarshal([]byte(raw), &q); err != nil {
		fmt.Println("error", err)
		return 1
	}
	self, _ := os.Executable()
	cl, err := Launcher{Self: self, Root: q.Root, Version: "test"}.Launch(q.Params.params())
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(SocketPath(q.Root, q.Params.SessionID), cl.Pid(), cl.HostPid())
	select {}
}

func catSpec() session.Spec {
	return session.Spec{Name: "cat", Argv: []string{"sh", "-c", `printf '\033[31mRED\033[0m READY\n'; exec cat`},
		Env: []string{"PATH", "HOME"}, Delivery: "type", Submit: "\r", Ready: "READY",
		Quiet: session.Duration{Duration: 50 * time.Millisecond}}
}

func params(t *testing.T, root string, spec session.Spec) session.Params {
	id := strings.ReplaceAll(t.Name(), "/", "_")
	return session.Params{Spec: spec, Dir: root, Cols: 60, Rows: 10, CastPath: filepath.Join(root, "runs", id+".cast"),
		TaskID: "T" + id, SessionID: "S" + id}
}

func launchHost(t *testing.T, spec session.Spec) (*Client, string) {
	t.Helper()
	root := t.TempDir()
	self, err := os.Executable()
	require.NoError(t, err)
	cl, err := Launcher{Self: self, Root: root, Version: "test"}.Launch(params(t, root, spec))
	require.NoError(t, err)
	// Whatever the test did, its host ends with it: SIGTERM through a
	// pidfd taken now, so a pid reused later is never signalled.
	if fd, err := pidfdOpen(cl.HostPid()); err == nil {
		t.Cleanup(func() {
			_ = unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0)
			_ = unix.Close(fd)
		})
	}
	t.Cleanup(func() {
		_ = cl.Stop(time.Second)
		_ = cl.Close()
	})
	return cl, root
}

// waitScreen waits on the client's change signal until its screen holds want.
func waitScreen(t *testing.T, cl *Client, want string) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for !strings.Contains(cl.View().Text(), want) {
		select {
		case <-cl.Changed():
		case <-deadline.C:
			t.Fatalf("the screen never showed %q; it shows:\n%s", want, cl.View().Text())
		}
	}
}

func TestHostServesScreenWithColoursInputAndResize(t *testing.T) {
	t.Parallel()
	cl, root := launchHost(t, catSpec())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	require.Contains(t, cl.View().Render(), "31mRED", "the colours reach the engine")
	require.NotEqual(t, os.Getpid(), cl.HostPid())
	require.Greater(t, cl.Pid(), 0)

	require.NoError(t, cl.Write([]byte("typed through the host\r")))
	waitScreen(t, cl, "typed through the host")
	require.NoError(t, cl.Notice("a line for the pane only"))
	waitScreen(t, cl, "a line for the pane only")

	require.NoError(t, cl.Resize(40, 8))
	c, r := cl.Size()
	require.Equal(t, [2]int{40, 8}, [2]int{c, r})
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		if c, r := cl.View().Size(); c == 40 && r == 8 {
			break
		}
		select {
		case <-cl.Changed():
		case <-deadline.C:
			t.Fatal("the emulator never took the new size")
		}
	}
	// The recording is the host's: it is there and names the output.
	b, err := os.ReadFile(filepath.Join(root, "runs", strings.ReplaceAll(t.Name(), "/", "_")+".cast"))
	require.NoError(t, err)
	require.Contains(t, string(b), "typed through the host")
	require.Contains(t, string(b), `"r"`)
}

func TestCheckedDeliveryAndRefusalsTravel(t *testing.T) {
	t.Parallel()
	spec := catSpec()
	// A pending pattern that always matches: the input is never taken, so
	// the host's refusal must reach the client as a *task.Refusal.
	spec.Pending = "READY"
	spec.SubmitRetries = 1
	cl, _ := launchHost(t, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	err := cl.SendChecked(ctx, "never taken")
	require.Error(t, err)
	require.Contains(t, err.Error(), "submit key was sent 2 times")
	var ref interface{ Error() string }
	require.ErrorAs(t, err, &ref)
	require.Equal(t, "*task.Refusal", fmt.Sprintf("%T", ref))
}

// TestHostOutlivesTheProcessThatStartedIt: an engine-like process launches
// a host and is killed with SIGKILL; the agent is still alive, and a new
// client dials the host and gets the screen and types keys.
func TestHostOutlivesTheProcessThatStartedIt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	raw, err := json.Marshal(spawnReq{Root: root, Params: launchOf(params(t, root, catSpec()))})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), spawnEnv+"="+string(raw))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the spawner printed nothing")
	f := strings.Fields(line)
	require.Len(t, f, 3, line)
	sock := f[0]
	agent, _ := strconv.Atoi(f[1])
	hostPid, _ := strconv.Atoi(f[2])
	t.Cleanup(func() { _ = syscall.Kill(hostPid, syscall.SIGTERM) })

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.NoError(t, syscall.Kill(agent, 0), "the agent died with the process that launched it")
	require.NoError(t, syscall.Kill(hostPid, 0), "the host died with the process that launched it")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, sock, "test")
	require.NoError(t, err)
	require.Equal(t, agent, cl.Pid())
	require.Nil(t, cl.Welcome().Exit)
	waitScreen(t, cl, "READY")
	require.Contains(t, cl.View().Render(), "31mRED")
	require.NoError(t, cl.Write([]byte("after the kill\r")))
	waitScreen(t, cl, "after the kill")

	// Stop ends the agent; the exit is reported; collecting it ends the host.
	require.NoError(t, cl.Stop(time.Second))
	<-cl.Done()
	// A stop begins with the hangup a closing terminal sends, then SIGTERM.
	require.Contains(t, []int{128 + int(syscall.SIGHUP), 128 + int(syscall.SIGTERM)}, cl.ExitCode())
	require.NoError(t, cl.Close())
	waitGone(t, hostPid)
	_, err = os.Stat(sock)
	require.ErrorIs(t, err, os.ErrNotExist, "a collected host removes its socket")
}

// TestExitWhileNobodyWatchesIsKeptUntilCollected: the agent exits while no
// client is connected; the next client learns the status and the time, and
// collecting it lets the host go.
func TestExitWhileNobodyWatchesIsKeptUntilCollected(t *testing.T) {
	t.Parallel()
	spec := catSpec()
	// The agent exits once the file "go" exists in its directory, which
	// the test creates only after its client has gone.
	spec.Argv = []string{"sh", "-c", "echo READY; while [ ! -e go ]; do sleep 0.02; done; exit 7"}
	cl, root := launchHost(t, spec)
	waitScreen(t, cl, "READY")
	hostPid, agentPid := cl.HostPid(), cl.Pid()
	cl.Detach()
	select {
	case <-cl.Done():
		t.Fatal("a detached client reports no exit")
	default:
	}
	before := time.Now()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go"), nil, 0o600))
	waitGone(t, agentPid) // it exited while no client was connected

	sock := SocketPath(root, "S"+strings.ReplaceAll(t.Name(), "/", "_"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl2, err := Dial(ctx, sock, "test")
	require.NoError(t, err)
	select {
	case <-cl2.Done():
	case <-ctx.Done():
		t.Fatal("the exit was never reported")
	}
	e, lost := cl2.Exit()
	require.False(t, lost)
	require.Equal(t, 7, e.Code)
	require.Equal(t, 7, cl2.ExitCode())
	require.False(t, e.At.Before(before.Add(-time.Second)), "exit time %s is before the input that ended it (%s)", e.At, before)
	require.NoError(t, syscall.Kill(hostPid, 0), "the host waits for its exit to be collected")
	require.NoError(t, cl2.Close())
	waitGone(t, hostPid)
}

func TestAVersionMismatchIsRefusedWithBothVersions(t *testing.T) {
	t.Parallel()
	cl, root := launchHost(t, catSpec())
	_ = cl
	sock := SocketPath(root, "S"+strings.ReplaceAll(t.Name(), "/", "_"))
	fi, err := os.Stat(sock)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(sock))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	c, err := dialRaw(sock)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Push(opHello, 0, hello{Protocol: ProtocolVersion + 1, Version: "future"}))
	f, err := c.Recv()
	require.NoError(t, err)
	require.Equal(t, opRefused, f.Op)
	require.Contains(t, f.Error, fmt.Sprintf("speaks host protocol %d and this engine speaks %d", ProtocolVersion, ProtocolVersion+1))
}

// waitGone waits until pid has exited (it is this test process's child,
// reaped by the launcher's Wait, or init's).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := pidfdOpen(pid)
	if err != nil {
		return // gone already
	}
	defer syscall.Close(fd)
	require.True(t, pollReadable(fd, 30*time.Second), "process %d is still alive", pid)
}

// The host survives a hangup, but its agent must not inherit an ignored
// SIGHUP, SIGINT or SIGPIPE: a stop begins with SIGHUP, and a shell pane
// ends on it at once rather than being killed after the grace.
func TestAgentKeepsDefaultSignalsAndStopsOnHangup(t *testing.T) {
	t.Parallel()
	spec := session.Spec{Name: "sh", Argv: []string{"sh", "-c", `grep SigIgn /proc/self/status; exec sh -i`},
		Env: []string{"PATH", "HOME"}, SetEnv: map[string]string{"PS1": "$ "}, Delivery: "type", Submit: "\r",
		Ready: `(?m)[$#] ?$`, Quiet: session.Duration{Duration: 50 * time.Millisecond}}
	cl, _ := launchHost(t, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	var mask uint64
	for _, line := range strings.Split(cl.View().Text(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "SigIgn:"); ok {
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%x", &mask)
			require.NoError(t, err)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE} {
		require.Zero(t, mask&(1<<(uint(sig)-1)), "the agent inherited an ignored %v (SigIgn %x)", sig, mask)
	}
	require.NoError(t, cl.Stop(time.Minute))
	require.Equal(t, 128+int(syscall.SIGHUP), cl.ExitCode(), "the shell ends on the hangup, not on a kill after the grace")
}

// A keyed input is remembered by the host as it begins to type it, and
// every later client is told: the next engine types no decision twice.
func TestKeyedInputsAreToldToTheNextClient(t *testing.T) {
	t.Parallel()
	cl, root := launchHost(t, catSpec())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	require.True(t, cl.Welcome().InputsKnown)
	require.Empty(t, cl.Welcome().Inputs)
	require.NoError(t, cl.SendKeyed(ctx, "D1", "first decision"))
	require.NoError(t, cl.SendChecked(ctx, "not keyed"))
	require.NoError(t, cl.SendKeyed(ctx, "D2", "second decision"))

	again, err := Dial(ctx, SocketPath(root, cl.Welcome().Session), "test")
	require.NoError(t, err)
	defer again.Detach()
	require.True(t, again.Welcome().InputsKnown)
	require.Equal(t, []string{"D1", "D2"}, again.Welcome().Inputs)
}

// A host of this version pushes the changed rows with each notice to an
// engine of this version, and bare notices to an engine older than that
// (its watch has no body), which then asks for the screen as before.
func TestAHostPushesRowsToANewEngineAndBareNoticesToAnOldOne(t *testing.T) {
	t.Parallel()
	cl, root := launchHost(t, catSpec())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	require.True(t, cl.Welcome().PushRows)
	require.True(t, cl.push, "the engine watches with pushed rows")

	old, err := dialRaw(SocketPath(root, cl.Welcome().Session))
	require.NoError(t, err)
	defer old.Close()
	require.NoError(t, old.Push("hello", 0, hello{Protocol: ProtocolVersion, Version: "older", Client: "engine"}))
	f, err := old.Recv()
	require.NoError(t, err)
	require.Equal(t, opWelcome, f.Op)
	require.NoError(t, old.Send(wireFrame(1, opWatch)))

	require.NoError(t, cl.Write([]byte("pushed to the engine\r")))
	waitScreen(t, cl, "pushed to the engine")
	rw := cl.View().(session.RowWriter)
	require.Contains(t, strings.Join(rw.AppendRows(nil, 0, 10, 60), "\n"), "pushed to the engine")

	// The older engine's notices carry the version and nothing else.
	var bare int
	for bare < 2 {
		f, err := old.Recv()
		require.NoError(t, err)
		if f.Op != opChanged {
			continue
		}
		var body map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(f.Body, &body))
		require.Contains(t, body, "version")
		require.Len(t, body, 1, "a bare notice: %s", f.Body)
		bare++
	}
	require.NoError(t, old.Send(wireFrame(2, opScreen)))
	for {
		f, err := old.Recv()
		require.NoError(t, err)
		if f.ID != 2 {
			continue
		}
		var sc screen
		require.NoError(t, json.Unmarshal(f.Body, &sc))
		require.Contains(t, sc.Text, "pushed to the engine")
		break
	}
}
