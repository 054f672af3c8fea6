package coord

import (
	"context"
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
