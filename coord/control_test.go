package coord

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestCommandCrossesTheSocketWhole checks every field of a Command reaches
// the other end of the control socket, so a field added for one command
// (resume's Path, Harness, Model) is never dropped on the way.
func TestCommandCrossesTheSocketWhole(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "control.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	defer ln.Close()
	got := make(chan Command, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var c Command
		if err := decodeCommand(conn, &c); err == nil {
			got <- c
		}
		_ = encodeReply(conn, controlReply{Result: Result{Message: "ok"}})
	}()
	want := Command{
		Kind: CmdResume, TaskID: "01ABC", Text: "t", Author: "a", Duration: 3 * time.Minute,
		Task: &task.Task{Title: "x", Goal: "y", Verify: "true", Pipeline: task.DefaultPipeline()},
		Path: "handoff.json", Harness: "claude", Model: "m",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := Send(ctx, path, want)
	require.NoError(t, err)
	require.Equal(t, "ok", res.Message)
	require.Equal(t, want, <-got)
}

// A client that connects to the control socket and never sends a command
// must not hold a goroutine and a file descriptor of the console for ever:
// when the console stops, its connection is closed.
func TestASilentControlClientIsClosedWhenTheConsoleStops(t *testing.T) {
	t.Parallel()
	c := &Coordinator{stopped: make(chan struct{})}
	path := filepath.Join(t.TempDir(), "control.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := serveControl(ctx, path, c.Do)
	require.NoError(t, err)
	conn, err := net.Dial("unix", path)
	require.NoError(t, err)
	defer conn.Close()
	// Another client's full round trip proves the silent one was accepted
	// (the accept loop takes connections in order) before the stop.
	closed := make(chan error, 1)
	go func() {
		_, err := conn.Read(make([]byte, 1))
		closed <- err
	}()
	probe, err := net.Dial("unix", path)
	require.NoError(t, err)
	_, err = probe.Write([]byte("not json\n"))
	require.NoError(t, err)
	reply, err := io.ReadAll(probe)
	require.NoError(t, err)
	require.Contains(t, string(reply), "bad request")
	require.NoError(t, probe.Close())
	stop()
	close(c.stopped)
	select {
	case err := <-closed:
		require.Error(t, err, "the server closed the silent connection")
	case <-time.After(10 * time.Second):
		t.Fatal("the silent connection is still open after the console stopped")
	}
}
