package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/wire"
)

// procState is the state letter of pid in /proc/PID/stat ('T' stopped).
func procState(t *testing.T, pid int) byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err)
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	require.Greater(t, i, 0, s)
	return s[i+2]
}

// groupOf lists the processes whose process group is pgid.
func groupOf(t *testing.T, pgid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A host trusted for a short while freezes its agent's whole process group
// once the trust runs out (the pane says so, and only once the leader is
// stopped); a newer trust thaws it and the agent takes keys again. A host
// never trusted never freezes: its agent runs on past the other's freeze.
func TestHostFreezesItsAgentWhenTheTrustRunsOutAndThawsOnANewOne(t *testing.T) {
	t.Parallel()
	spec := catSpec()
	// A child in the agent's group besides the leader, which the freeze
	// must reach too.
	spec.Argv = []string{"sh", "-c", `sleep 1000 & echo "CHILD $!"; printf 'READY\n'; exec cat`}
	cl, _ := launchHost(t, spec)
	never, _ := launchHost(t, catSpec())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	require.NoError(t, never.WaitReady(ctx))
	m := regexp.MustCompile(`CHILD (\d+)`).FindStringSubmatch(cl.View().Text())
	require.NotNil(t, m, cl.View().Text())
	child, _ := strconv.Atoi(m[1])
	require.ElementsMatch(t, []int{cl.Pid(), child}, groupOf(t, cl.Pid()))

	const window = 300 * time.Millisecond
	until := time.Now().Add(window)
	cl.Trust(until)
	waitScreen(t, cl, "frozen (SIGSTOP)")
	late := time.Since(until)
	t.Logf("frozen %s after the trust ran out", late)
	// The window is sent in whole milliseconds, rounded down.
	require.GreaterOrEqual(t, late, -time.Millisecond, "frozen before the trust ran out")
	require.Equal(t, byte('T'), procState(t, cl.Pid()), "the leader runs on after the freeze was shown")
	// The child got its SIGSTOP with the leader; only the leader's stop
	// can be waited on (it is the host's child), so the child's is read
	// until the kernel has applied it.
	require.Eventually(t, func() bool { return procState(t, child) == 'T' }, 5*time.Second, time.Millisecond,
		"the agent's child runs on after its group was frozen")
	require.NotEqual(t, byte('T'), procState(t, never.Pid()), "a host never trusted froze its agent")

	// A newer trust thaws the group (SIGCONT resumes it as it is sent)
	// and the agent takes keys again.
	cl.Trust(time.Now().Add(time.Minute))
	waitScreen(t, cl, "trust came again")
	for _, pid := range []int{cl.Pid(), child} {
		require.NotEqual(t, byte('T'), procState(t, pid), "pid %d is still stopped after the new trust", pid)
	}
	require.NoError(t, cl.Write([]byte("after the thaw\r")))
	waitScreen(t, cl, "after the thaw")
	require.NotEqual(t, byte('T'), procState(t, never.Pid()))
}

// A trust renewed before it runs out keeps the agent running: the freeze
// comes only after the last one, by its own window.
func TestHostTrustRenewedInTimeNeverFreezes(t *testing.T) {
	t.Parallel()
	cl, _ := launchHost(t, catSpec())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	// Each renewal is sent once the previous one's key is echoed: the
	// agent ran after it, so it was never frozen in between.
	var last time.Time
	for i := range 3 {
		last = time.Now().Add(1500 * time.Millisecond)
		cl.Trust(last)
		key := "renewal " + strconv.Itoa(i)
		require.NoError(t, cl.Write([]byte(key+"\r")))
		waitScreen(t, cl, key)
		require.NotContains(t, cl.View().Text(), "frozen (SIGSTOP)", "frozen while renewed in time")
	}
	waitScreen(t, cl, "frozen (SIGSTOP)")
	require.GreaterOrEqual(t, time.Since(last), -time.Millisecond, "frozen before the last trust ran out")
	require.Equal(t, byte('T'), procState(t, cl.Pid()))
}

// A host older than the trust request answers "unknown request": the
// client takes it as a host without the switch and does not ask it again
// (so a beat costs such a host nothing), and nothing else is disturbed.
func TestAClientStopsTrustingAHostOlderThanTheRequest(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "old.sock")
	ln, err := wire.Listen(sock)
	require.NoError(t, err)
	defer ln.Close()
	trusts := make(chan struct{}, 10)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		c := wire.NewConn(nc)
		var h hello
		if wire.ReadHello(c, nc, "an old host", &h) != nil {
			return
		}
		_ = c.Push(opWelcome, 0, Welcome{Protocol: ProtocolVersion, Version: "old", Pid: 2, HostPid: 3, Cols: 20, Rows: 5})
		for {
			f, err := c.Recv()
			if err != nil {
				return
			}
			if f.Op == opWatch {
				_ = c.Push(opOK, f.ID, nil)
				continue
			}
			if f.Op == opTrust {
				trusts <- struct{}{}
			}
			// What a host of before the request says to it.
			_ = c.Send(wire.Frame{ID: f.ID, Op: opError, Error: fmt.Sprintf("unknown request %q (host protocol %d)", f.Op, ProtocolVersion)})
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, sock, "test")
	require.NoError(t, err)
	defer cl.Detach()

	cl.Trust(time.Now().Add(time.Minute))
	<-trusts
	// The sender takes the answer and ends: until then a new deadline
	// would go to it rather than start another.
	for {
		cl.trustMu.Lock()
		busy := cl.trusting
		cl.trustMu.Unlock()
		if !busy {
			break
		}
		runtime.Gosched()
	}
	require.True(t, cl.noTrust.Load(), "the unknown request was not taken as an older host")
	cl.Trust(time.Now().Add(time.Minute))
	cl.Trust(time.Now().Add(2 * time.Minute))
	// A request answered after any trust would have been sent.
	_, known := cl.CPU()
	require.False(t, known)
	require.Empty(t, trusts, "an older host was trusted again")
}

// A trust carries its deadline by the machine's monotonic clock too, and
// the host keeps the earlier one: a trust that came after its deadline (its
// engine stopped between reckoning it and writing it) freezes an agent
// that runs, and thaws none that is frozen.
func TestAHostTakesALateTrustForWhatWasLeftOfIt(t *testing.T) {
	t.Parallel()
	cl, root := launchHost(t, catSpec())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	c, err := dialRaw(SocketPath(root, cl.Welcome().Session))
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Push(opHello, 0, hello{Protocol: ProtocolVersion, Version: "test", Client: "engine"}))
	f, err := c.Recv()
	require.NoError(t, err)
	require.Equal(t, opWelcome, f.Op)
	var id uint64
	trust := func(untilMono int64) {
		t.Helper()
		id++
		require.NoError(t, c.Push(opTrust, id, trustReq{ForMS: time.Minute.Milliseconds(), UntilMonoNS: untilMono}))
		for {
			f, err := c.Recv()
			require.NoError(t, err)
			if f.ID == id {
				require.Equal(t, opOK, f.Op, f.Error)
				return
			}
		}
	}

	trust(monoNow() - int64(time.Second))
	waitScreen(t, cl, "frozen (SIGSTOP)")
	require.Equal(t, byte('T'), procState(t, cl.Pid()), "a late trust let the agent run")
	trust(monoNow() - int64(time.Second))
	require.Equal(t, byte('T'), procState(t, cl.Pid()), "a late trust thawed the agent")
	require.NotContains(t, cl.View().Text(), "trust came again")
	trust(monoNow() + int64(time.Minute))
	waitScreen(t, cl, "trust came again")
	require.NotEqual(t, byte('T'), procState(t, cl.Pid()))
}
