package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// ReadyFDEnv names the variable that tells a background engine which file
// descriptor to report its start on: "ready" once it serves, or the reason
// it could not start.
const ReadyFDEnv = "ORCHESTRA_ENGINE_READY_FD"

// maxLog is the size past which engine.log is rotated to engine.log.1 when
// an engine starts.
const maxLog = 8 << 20

// startWait bounds how long a background engine may take to serve.
const startWait = 30 * time.Second

// Spawn starts a background engine for the repository at root: the binary
// self run as `self engine --foreground -C root`, in a session of its own
// (no controlling terminal, so closing the terminal does not reach it), its
// stdout and stderr appended to engine.log. It returns the engine's pid once
// it serves, or why it did not start.
func Spawn(ctx context.Context, self, root string, extra ...string) (int, error) {
	p := PathsFor(root)
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return 0, fmt.Errorf("engine directory: %w", err)
	}
	rotate(p.Log)
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("engine log: %w", err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer pr.Close()
	args := append([]string{"engine", "--foreground", "-C", root}, extra...)
	cmd := exec.Command(self, args...)
	cmd.Dir = root
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.ExtraFiles = []*os.File{pw}
	cmd.Env = append(coord.StoreEnv(os.Environ()), ReadyFDEnv+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return 0, fmt.Errorf("start the engine: %w", err)
	}
	pw.Close()
	pid := cmd.Process.Pid
	// The engine outlives this process; nothing here waits for it, and
	// init adopts it when this process exits.
	_ = cmd.Process.Release()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(pr).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	select {
	case s := <-line:
		if s == "ready" {
			return pid, nil
		}
		if s == "" {
			s = "it exited at once"
		}
		var le *LockedError
		if strings.HasPrefix(s, "locked ") {
			var other int
			fmt.Sscanf(s, "locked %d", &other)
			le = &LockedError{Pid: other}
			return other, le
		}
		return 0, fmt.Errorf("the engine did not start: %s (its log: %s)", s, p.Log)
	case <-ctx.Done():
		return pid, fmt.Errorf("the engine (pid %d) did not answer within %s; see %s", pid, startWait, p.Log)
	}
}

// TakeReady takes the descriptor ReadyFDEnv names, if any, out of the
// environment (agents must not inherit it) and returns the function that
// reports the engine's start on it: "ready" when err is nil, else the
// reason. Without the variable the function does nothing.
func TakeReady() func(err error) {
	fd := os.Getenv(ReadyFDEnv)
	os.Unsetenv(ReadyFDEnv)
	var n int
	if _, e := fmt.Sscanf(fd, "%d", &n); e != nil || n < 3 {
		return func(error) {}
	}
	syscall.CloseOnExec(n)
	f := os.NewFile(uintptr(n), "engine-ready")
	if f == nil {
		return func(error) {}
	}
	return func(err error) {
		defer f.Close()
		msg := "ready"
		var le *LockedError
		switch {
		case errors.As(err, &le):
			msg = fmt.Sprintf("locked %d", le.Pid)
		case err != nil:
			msg = strings.ReplaceAll(err.Error(), "\n", " ")
		}
		_, _ = io.WriteString(f, msg+"\n")
	}
}

// rotate moves a log past maxLog aside, keeping one old file.
func rotate(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLog {
		_ = os.Rename(path, path+".1")
	}
}
