package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// Dir is where a repository's session hosts keep their sockets and logs,
// under its state directory.
func Dir(root string) string { return filepath.Join(root, task.StateDir, "hosts") }

// SocketPath is where the host of a session serves. It is derived from
// the session's id, which the session row holds, so a restarted engine
// finds every host from the store alone.
func SocketPath(root, sessionID string) string {
	return filepath.Join(Dir(root), sessionID+".sock")
}

// LogPath is where a host's own stdout and stderr go.
func LogPath(root, sessionID string) string {
	return filepath.Join(Dir(root), sessionID+".log")
}

// startWait bounds how long a host may take to start its agent and serve.
const startWait = 30 * time.Second

// Launcher starts sessions in hosts for one repository.
type Launcher struct {
	// Self is the binary to run as `Self host`.
	Self string
	// Root is the repository's root.
	Root string
	// Version is the binary's version, for the handshake.
	Version string
}

// Launch starts the session p describes in a host of its own and returns
// a client connected to it. The host runs in a session of its own (no
// controlling terminal, no process group shared with the engine), with
// its output in its log: killing the engine, however, leaves it and its
// agent running.
func (l Launcher) Launch(p session.Params) (*Client, error) {
	if p.SessionID == "" {
		return nil, errors.New("a session host needs the session's id")
	}
	if err := os.MkdirAll(Dir(l.Root), 0o700); err != nil {
		return nil, fmt.Errorf("session host directory: %w", err)
	}
	if err := os.Chmod(Dir(l.Root), 0o700); err != nil {
		return nil, fmt.Errorf("session host directory: %w", err)
	}
	sock := SocketPath(l.Root, p.SessionID)
	logf, err := os.OpenFile(LogPath(l.Root, p.SessionID), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session host log: %w", err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer inR.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		inW.Close()
		return nil, err
	}
	defer readyR.Close()
	cmd := exec.Command(l.Self, "host", "--socket", sock, "--version", l.Version)
	cmd.Dir = l.Root
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.ExtraFiles = []*os.File{inR, readyW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		inW.Close()
		readyW.Close()
		return nil, fmt.Errorf("start the session host: %w", err)
	}
	readyW.Close()
	// This engine reaps the host if it outlives it; if the engine dies
	// first, init (or the nearest subreaper) does.
	go func() { _ = cmd.Wait() }()
	werr := json.NewEncoder(inW).Encode(launchOf(p))
	inW.Close()
	if werr != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("hand the launch to the session host: %w", werr)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(readyR).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case s := <-line:
		if !strings.HasPrefix(s, "ready") {
			if s == "" {
				s = "it exited at once (see " + LogPath(l.Root, p.SessionID) + ")"
			}
			return nil, errors.New(s)
		}
	case <-t.C:
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("the session host (pid %d) did not serve within %s; see %s", cmd.Process.Pid, startWait, LogPath(l.Root, p.SessionID))
	}
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	return Dial(ctx, sock, l.Version)
}

var _ worker.Session = (*Client)(nil)

// Starter returns the coordinator's starter for sessions in hosts: the
// worker's logic runs in the engine as ever, over a session whose pty,
// recording and screen live in a host started by l.
func (l Launcher) Starter() worker.Starter {
	return func(ctx context.Context, p worker.Params) (worker.Handle, error) {
		p.Launch = func(sp session.Params) (worker.Session, error) {
			cl, err := l.Launch(sp)
			if err != nil {
				return nil, err // never a typed nil inside the interface
			}
			return cl, nil
		}
		return worker.StartInProcess(ctx, p)
	}
}
