package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// DefaultMaxOutput is how much of the output's tail a verdict keeps when
// Params.MaxOutput is zero.
const DefaultMaxOutput = 64 << 10

// killGrace is how long a process group has between SIGTERM and SIGKILL, and
// how long Run waits for the output pipe to drain after the command ended.
const killGrace = 2 * time.Second

// Params says what to run and how.
type Params struct {
	Dir       string        // working directory: the task's worktree
	Command   string        // run via /bin/sh -c
	Timeout   time.Duration // 0 means no limit beyond ctx
	MaxOutput int           // bytes of output tail kept; 0 means DefaultMaxOutput
	Env       []string      // nil means os.Environ()
	// Now is the clock for Verdict.At and Duration; nil means time.Now.
	Now func() time.Time
	// Task, when set, marks the gate's environment as this task's gate
	// (session.TaskEnv = GateMark(Task)); a gate of the task still running
	// from a console that was killed is stopped before this one starts, so
	// two gates never run side by side in one worktree.
	Task string
	// Owner is the engine's owner mark (session.OwnerMark): the gate
	// carries it, and the stop of an earlier gate of the task touches its
	// own engine's only, never another engine's on this machine.
	Owner string

	// started, when set, is told the process group id once the command
	// runs, so tests can check the whole group is gone afterwards.
	started func(pgid int)
}

// Run runs p.Command in its own process group and returns the verdict. It
// never returns an error: a command that cannot run is a StatusError
// verdict with a detail the operator can act on.
//
// On timeout or cancellation the whole group gets SIGTERM and, after a short
// grace, SIGKILL. Processes left in the group after the command exits are
// killed too, so a verify run leaves nothing behind. Output (stdout and
// stderr together) is kept only as a bounded tail, but summary lines are
// counted over all of it.
func Run(ctx context.Context, p Params) Verdict {
	now := p.Now
	if now == nil {
		now = time.Now
	}
	max := p.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	env := p.Env
	if env == nil {
		env = os.Environ()
	}
	if p.Task != "" {
		env = append(env[:len(env):len(env)], session.TaskEnv+"="+GateMark(p.Task))
		if p.Owner != "" {
			env = append(env, session.OwnerEnv+"="+p.Owner)
		}
		if err := session.StopMarked(p.Owner, GateMark(p.Task), "", killGrace); err != nil {
			return Verdict{Status: StatusError, Detail: "an earlier verify run of this task could not be stopped: " + err.Error(), At: now()}
		}
	}
	v := Verdict{Command: p.Command, ExitCode: -1}
	begin := now()
	finish := func() Verdict {
		end := now()
		v.At, v.Duration = end, end.Sub(begin)
		return v
	}
	if strings.TrimSpace(p.Command) == "" {
		v.Status, v.Detail = StatusError, "no verify command is configured"
		return finish()
	}

	runCtx := ctx
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}

	// The command writes to our own pipe rather than an io.Writer so that
	// Wait returns when the shell exits, not when the last grandchild
	// closes its copy of the pipe; the drain below is bounded separately.
	pr, pw, err := os.Pipe()
	if err != nil {
		v.Status, v.Detail = StatusError, fmt.Sprintf("could not start: create output pipe: %v", err)
		return finish()
	}
	defer pr.Close()
	// What the shell starts dies with the engine too (deathwatch.go). The
	// shell waits on fd 3 for the watcher to know its group: an engine
	// killed between the two would otherwise leave the group unwatched.
	watch := startDeathWatch()
	defer watch.stop()
	script, goR, goW := GoTestJSON(p.Command), (*os.File)(nil), (*os.File)(nil)
	if watch != nil {
		if goR, goW, err = os.Pipe(); err != nil {
			pw.Close()
			v.Status, v.Detail = StatusError, fmt.Sprintf("could not start: create start pipe: %v", err)
			return finish()
		}
		defer goW.Close()
		script = "read -r _ <&3 || exit 125\nexec 3<&-\n" + script
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	if goR != nil {
		cmd.ExtraFiles = []*os.File{goR}
	}
	cmd.Dir, cmd.Env = p.Dir, env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = pw, pw
	// Pdeathsig: the gate dies with the engine that started it, rather than
	// running on beside the next engine's gate; what it started is found
	// by the task's gate mark.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	if goR != nil {
		goR.Close()
	}
	if err != nil {
		pw.Close()
		v.Status, v.Detail = StatusError, fmt.Sprintf("could not start %q in %s: %v", p.Command, dirName(p.Dir), err)
		return finish()
	}
	pw.Close() // the children hold the write end now
	pgid := cmd.Process.Pid
	watch.watch(pgid)
	if goW != nil {
		_, _ = goW.WriteString("\n")
	}
	if p.started != nil {
		p.started(pgid)
	}

	out := newTailWriter(max)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var waitErr error
	var stopped error // why Run killed the group, nil when it did not
	select {
	case waitErr = <-waited:
	case <-runCtx.Done():
		stopped = runCtx.Err()
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		grace := time.NewTimer(killGrace)
		select {
		case waitErr = <-waited:
		case <-grace.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			waitErr = <-waited
		}
		grace.Stop()
	}
	// Whatever is left in the group (background jobs, children that
	// ignored SIGTERM) goes now. The group id cannot have been reused while
	// any member lives, and ESRCH just means it is already empty.
	killGroup(pgid)

	// A grandchild that left the group could hold the pipe open forever;
	// give the drain a bounded time, then cut it off.
	drain := time.NewTimer(killGrace)
	select {
	case <-drained:
	case <-drain.C:
		pr.Close()
		<-drained
	}
	drain.Stop()
	out.finish()

	v.Tail = out.tail()
	v.OutputBytes = out.total
	v.Passed, v.Failed, v.Skipped, v.Counted = out.count.passed, out.count.failed, out.count.skipped, out.count.ok
	v.ExitCode = cmd.ProcessState.ExitCode()
	classify(&v, waitErr, stopped, p.Timeout, ctx.Err())
	return finish()
}

// classify sets Status and Detail from how the command ended.
func classify(v *Verdict, waitErr, stopped error, timeout time.Duration, parentErr error) {
	switch {
	case stopped != nil && parentErr == nil && errors.Is(stopped, context.DeadlineExceeded):
		v.Status = StatusError
		v.Detail = fmt.Sprintf("timed out after %s; the command's process group was killed", timeout)
	case stopped != nil && errors.Is(parentErr, context.DeadlineExceeded):
		v.Status = StatusError
		v.Detail = "timed out: the run's deadline passed; the command's process group was killed"
	case stopped != nil:
		v.Status = StatusError
		v.Detail = "canceled; the command's process group was killed"
	case v.ExitCode == 0:
		v.Status = StatusOK
	case v.ExitCode == 127:
		v.Status = StatusError
		v.Detail = "command not found (exit 127)" + lastLine(v.Tail)
	case v.ExitCode == 126:
		v.Status = StatusError
		v.Detail = "command not executable (exit 126)" + lastLine(v.Tail)
	case v.ExitCode < 0:
		// Killed by a signal Run did not send: out of memory, a crash.
		v.Status = StatusError
		v.Detail = fmt.Sprintf("the command was killed: %v", waitErr)
	default:
		// The tests ran (or the build they need failed) and said no.
		v.Status = StatusIncomplete
		v.Detail = fmt.Sprintf("exit %d", v.ExitCode)
	}
}

// lastLine returns ": " and the last non-blank line of s, or "".
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	const max = 200
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return ": " + strings.TrimSpace(s)
}

func dirName(dir string) string {
	if dir == "" {
		return "the current directory"
	}
	return dir
}

// GateMark is the value of session.TaskEnv in the environment of task's
// verify gate: distinct from the task's sessions, so stopping an old gate
// never touches a live agent.
func GateMark(task string) string { return "verify:" + task }
