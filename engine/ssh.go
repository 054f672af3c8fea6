package engine

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// SSHCommandEnv names the variable that replaces "ssh" for --remote and for
// an engine reaching another machine's engine, as GIT_SSH_COMMAND does for
// git: the program and its options, split at spaces (e.g. "ssh -F
// /path/to/config").
const SSHCommandEnv = "ORCHESTRA_SSH_COMMAND"

// SSHConn is the engine protocol carried by an ssh child process running
// `orchestra-tui attach --stdio` on the other machine. SSH authenticates
// both ends; nothing of ours listens on the network.
type SSHConn struct {
	io.Reader
	io.WriteCloser
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	once   sync.Once
	waited chan struct{}
	err    error
}

// DialSSH runs `ssh DEST BIN attach --stdio -C DIR ARGS...` and returns its
// standard input and output as one connection to the engine of the
// repository DIR on DEST.
func DialSSH(dest, dir, bin string, args ...string) (*SSHConn, error) {
	if dest == "" || strings.HasPrefix(dest, "-") {
		return nil, fmt.Errorf("ssh destination %q: want [user@]host", dest)
	}
	ssh := []string{"ssh"}
	if v := strings.Fields(os.Getenv(SSHCommandEnv)); len(v) > 0 {
		ssh = v
	}
	// ssh joins the remote words into one shell command line: quote them.
	words := []string{ShellQuote(bin), "attach", "--stdio", "-C", ShellQuote(dir)}
	for _, a := range args {
		words = append(words, ShellQuote(a))
	}
	argv := append(ssh[1:], "-T", "-o", "BatchMode=yes", "--", dest, strings.Join(words, " "))
	cmd := exec.Command(ssh[0], argv...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &SSHConn{Reader: out, WriteCloser: in, cmd: cmd, stderr: &bytes.Buffer{}, waited: make(chan struct{})}
	// ssh's own messages must not scribble over a console: they are kept
	// and shown when the connection fails.
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", ssh[0], err)
	}
	go func() { c.err = cmd.Wait(); close(c.waited) }()
	return c, nil
}

// Close ends the ssh process.
func (c *SSHConn) Close() error {
	c.once.Do(func() {
		_ = c.WriteCloser.Close()
		select {
		case <-c.waited:
		default:
			_ = c.cmd.Process.Kill()
		}
	})
	return nil
}

// Explain ends the connection and adds what ssh said to err.
func (c *SSHConn) Explain(err error) error {
	c.Close()
	<-c.waited
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return fmt.Errorf("%w\nssh: %s", err, msg)
	}
	return err
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
