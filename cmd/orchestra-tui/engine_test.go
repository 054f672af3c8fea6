package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// ledgerTexts reads the texts of every event of the repository's ledger.
func ledgerTexts(t *testing.T, root string) []string {
	t.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	evs, err := st.EventList(context.Background(), store.EventListParams{})
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		out = append(out, e.Text)
	}
	return out
}

// With no engine running, the CLI's commands that need no session apply
// the coordinator's own transitions and write the engine's own texts.
func TestCommandsWithNoEngineUseTheEnginesCode(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "Offline", "--goal", "g", "--verify", "true", "--pipeline", "implement")
	require.Equal(t, 0, code, stderr)
	id := strings.TrimSpace(stdout)
	code, stdout, stderr = cli(t, "correct", "-C", root, id, "use", "integers")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "queued for the next brief (no engine runs")
	code, stdout, stderr = cli(t, "park", "-C", root, id)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "parked")
	code, _, stderr = cli(t, "extend", "-C", root, id, "5m")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "needs a running engine")
	code, stdout, stderr = cli(t, "cancel", "-C", root, id)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "(no engine runs)")
	require.NotContains(t, stdout, "starts one", "a cancelled task waits for no engine")
	texts := ledgerTexts(t, root)
	require.Contains(t, texts, "Task added: Offline (implement, harness scripted).")
	require.Contains(t, texts, "Parked by "+author()+".")
	require.Contains(t, texts, "Cancelled by "+author()+".")

	code, stdout, _ = cli(t, "stop", "-C", root)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "no engine runs")
}

// An engine killed while it was starting a process leaves its listening
// socket open in that child until the child's exec (a child holds a copy
// of every descriptor between fork and exec); a command that connects then
// is never answered and is reset when the child execs. The soak saw `add`
// fail its handshake that way once in 400 kills. Here the socket takes the
// command's connection and drops it unanswered, then nothing listens: the
// command dials again, finds no engine and works on the store itself.
func TestACommandWaitsOutTheSocketOfAKilledEngine(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	p := engine.PathsFor(root)
	require.NoError(t, os.MkdirAll(p.Dir, 0o700))
	ln, err := net.Listen("unix", p.Socket)
	require.NoError(t, err)
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // the socket file stays, as a killed engine's does
	dropped := make(chan struct{})
	go func() {
		defer close(dropped)
		c, err := ln.Accept()
		ln.Close()
		if err == nil {
			c.Close() // the hello unread: the command's read is reset
		}
	}()
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "After a kill", "--goal", "g", "--verify", "true", "--pipeline", "implement")
	<-dropped
	require.Equal(t, 0, code, stderr)
	require.NotEmpty(t, strings.TrimSpace(stdout))
	require.Contains(t, ledgerTexts(t, root), "Task added: After a kill (implement, harness scripted).")
}

// With an engine running, the CLI's commands go to it, and stop ends it.
func TestCommandsGoThroughARunningEngine(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	// No slot runs the scripted harness: the task stays queued, and no
	// agent starts in this test.
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[[slots]]\nname = \"only-shell\"\nharness = \"shell\"\ncapacity = 1\n"), 0o644))
	e, err := engine.Start(context.Background(), engine.Params{Dir: root, Version: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	notices, unsub := e.Subscribe()
	defer unsub()
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "Live", "--goal", "g", "--verify", "true", "--pipeline", "implement")
	require.Equal(t, 0, code, stderr)
	id := task.ID(strings.TrimSpace(stdout))
	// The engine published it: it added the task itself.
	for n := range notices {
		if n.Event != nil && n.Event.Kind == task.EvTaskAdded {
			require.Equal(t, id, n.Event.TaskID)
			break
		}
	}
	code, _, stderr = cli(t, "park", "-C", root, string(id))
	require.Equal(t, 0, code, stderr)
	var tv coord.TaskView
	for _, v := range e.Snapshot().Tasks {
		if v.Task.ID == id {
			tv = v
		}
	}
	require.Equal(t, task.StateParked, tv.Task.State)

	// A second engine is refused with the first one's pid.
	code, _, stderr = cli(t, "engine", "--foreground", "-C", root)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "an engine already runs on this repository (pid ")

	code, stdout, stderr = cli(t, "stop", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "no session was running")
	require.Contains(t, stdout, "stopped")
	<-e.Done()
}

// An engine killed while it was starting a process leaves the engine lock
// and its listening socket in that child until the child's exec. An engine
// a console starts just then finds the lock held and the socket answering,
// and gives way; then the child execs and both are free, with no engine.
// The console starts one again instead of waiting for one that will never
// answer.
func TestConsoleStartsAgainWhenAForkChildHeldTheLock(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	p := engine.PathsFor(root)
	require.NoError(t, os.MkdirAll(p.Dir, 0o700))
	// The child's copies: the lock held, the socket listening, nobody serving.
	lock, err := engine.Acquire(p.Lock)
	require.NoError(t, err)
	ln, err := net.Listen("unix", p.Socket)
	require.NoError(t, err)
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // the socket file stays, as a killed engine's does
	go func() {
		// The starting engine's look at the socket is the one connection:
		// it has given way by now. The child execs.
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
		ln.Close()
		_ = lock.Release()
	}()
	starts := 0
	ctx := context.Background()
	cl, err := startAndDial(ctx, p, engine.Options{Version: version(), Kind: "cli"}, func() error {
		starts++
		e, err := engine.Start(ctx, engine.Params{Dir: root, Version: version()})
		if err == nil {
			t.Cleanup(func() { _ = e.Stop() })
		}
		return err
	})
	require.NoError(t, err)
	defer cl.Close()
	require.Equal(t, 2, starts, "the first engine gave way to the lock's holder; the second serves")
	require.Equal(t, os.Getpid(), cl.Pid())
}
