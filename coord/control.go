package coord

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// ControlPath returns the control socket's path for a repository root. A
// running console serves it so `orchestra-tui correct` (and other commands)
// from another terminal reach the live coordinator at once, with no polling.
func ControlPath(root string) string { return filepath.Join(root, task.StateDir, "control.sock") }

type controlRequest struct {
	Kind     CommandKind   `json:"kind"`
	TaskID   task.ID       `json:"task_id,omitempty"`
	Text     string        `json:"text,omitempty"`
	Author   string        `json:"author,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Task     *task.Task    `json:"task,omitempty"`
}

type controlReply struct {
	Result Result `json:"result"`
	Error  string `json:"error,omitempty"`
}

// serveControl listens on a unix socket only its owner can use (0600) and
// answers one JSON command per connection.
func (c *Coordinator) serveControl(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("control socket dir: %w", err)
	}
	// A socket left by a console that was killed is stale; one that answers
	// belongs to another running console.
	if conn, err := net.Dial("unix", path); err == nil {
		conn.Close()
		return nil, fmt.Errorf("another console is already running on this repository (%s answers)", path)
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go c.serveConn(ctx, conn)
		}
	}()
	return func() {
		ln.Close()
		<-done
		_ = os.Remove(path)
	}, nil
}

func (c *Coordinator) serveConn(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	var req controlRequest
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&req); err != nil {
		_ = json.NewEncoder(conn).Encode(controlReply{Error: "bad request: " + err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout(req.Kind))
	defer cancel()
	res, err := c.Do(ctx, Command{Kind: req.Kind, TaskID: req.TaskID, Text: req.Text, Author: req.Author, Duration: req.Duration, Task: req.Task})
	rep := controlReply{Result: res}
	if err != nil {
		rep.Error = err.Error()
	}
	_ = json.NewEncoder(conn).Encode(rep)
}

// ErrNoConsole means no console is serving the control socket.
var ErrNoConsole = errors.New("no console is running on this repository")

// Send delivers a command to the console serving the control socket at
// path. It returns ErrNoConsole when none answers.
func Send(ctx context.Context, path string, cmd Command) (Result, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return Result{}, ErrNoConsole
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	req := controlRequest{Kind: cmd.Kind, TaskID: cmd.TaskID, Text: cmd.Text, Author: cmd.Author, Duration: cmd.Duration, Task: cmd.Task}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return Result{}, fmt.Errorf("send to console: %w", err)
	}
	var rep controlReply
	if err := json.NewDecoder(conn).Decode(&rep); err != nil {
		return Result{}, fmt.Errorf("read console's answer: %w", err)
	}
	if rep.Error != "" {
		return rep.Result, errors.New(rep.Error)
	}
	return rep.Result, nil
}
