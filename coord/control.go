package coord

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// ControlPath returns the control socket's path for a repository root. A
// running console serves it so `orchestra-tui correct` (and other commands)
// from another terminal reach the live coordinator at once, with no polling.
func ControlPath(root string) string { return filepath.Join(root, task.StateDir, "control.sock") }

type controlReply struct {
	Result Result `json:"result"`
	Error  string `json:"error,omitempty"`
}

// serveControl listens on a unix socket only its owner can use (0600) and
// answers one JSON command per connection with do (the coordinator's Do).
func serveControl(ctx context.Context, path string, do func(context.Context, Command) (Result, error)) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
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
	// Live connections are closed at stop: a client that connected and
	// never sent its command would otherwise hold a goroutine and a file
	// descriptor after the console stopped.
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[conn] = struct{}{}
			mu.Unlock()
			go func() {
				serveConn(ctx, conn, do)
				mu.Lock()
				delete(conns, conn)
				mu.Unlock()
			}()
		}
	}()
	return func() {
		ln.Close()
		<-done
		mu.Lock() // the accept loop has ended: no connection is added now
		for conn := range conns {
			conn.Close()
		}
		mu.Unlock()
		_ = os.Remove(path)
	}, nil
}

// requestWait bounds how long a connection may take to send its command.
const requestWait = 30 * time.Second

func serveConn(ctx context.Context, conn net.Conn, do func(context.Context, Command) (Result, error)) {
	defer conn.Close()
	// The request is the Command itself, so a field added to Command
	// travels over the socket without a second list to keep in step.
	var req Command
	_ = conn.SetReadDeadline(time.Now().Add(requestWait))
	if err := decodeCommand(conn, &req); err != nil {
		_ = encodeReply(conn, controlReply{Error: "bad request: " + err.Error()})
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(ctx, commandTimeout(req.Kind))
	defer cancel()
	res, err := do(ctx, req)
	rep := controlReply{Result: res}
	if err != nil {
		rep.Error = err.Error()
	}
	_ = encodeReply(conn, rep)
}

// maxCommandBytes bounds one command on the control socket: a correction
// is at most a few KiB, so a peer sending more is refused, not buffered.
const maxCommandBytes = 4 << 20

func decodeCommand(r io.Reader, c *Command) error {
	return json.NewDecoder(bufio.NewReader(io.LimitReader(r, maxCommandBytes))).Decode(c)
}

func encodeReply(w io.Writer, rep controlReply) error { return json.NewEncoder(w).Encode(rep) }

// ErrNoConsole means no console is serving the control socket.
var ErrNoConsole = errors.New("no console is running on this repository")

// Send delivers a command to the console serving the control socket at
// path. It returns ErrNoConsole when none answers.
func Send(ctx context.Context, path string, cmd Command) (Result, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if errors.Is(err, os.ErrPermission) {
		// A console runs, but as someone else (the socket is 0600): saying
		// "no console" would send the operator to start a second one.
		return Result{}, fmt.Errorf("a console is running on this repository but its control socket %s refused you (permission denied): run this command as the user who started the console", path)
	}
	if err != nil {
		return Result{}, ErrNoConsole
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := json.NewEncoder(conn).Encode(cmd); err != nil {
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
