package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Marked returns the live processes whose environment carries TaskEnv=task
// and whose owner mark is owner's (ownedBy: owner "" finds every owner's),
// this process excluded. Processes it may not read (another user's) are
// skipped: they cannot be ours.
func Marked(owner, task string) []Proc {
	if task == "" {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(TaskEnv + "=" + task)
	self := os.Getpid()
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || len(env) == 0 {
			continue // gone, another user's, or a zombie (empty environ)
		}
		if m, ok := marks(env, want); ok && ownedBy(m.owner, owner) {
			out = append(out, Proc{Pid: pid, Session: m.session, Owner: m.owner})
		}
	}
	return out
}

// procMarks are the session and owner marks of a process.
type procMarks struct{ session, owner string }

// marks reports whether env (NUL-separated) holds want exactly, and the
// session and owner marks beside it (the last of each, as a lookup
// through the environment finds).
func marks(env, want []byte) (procMarks, bool) {
	found, m := false, procMarks{}
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(kv, want) {
			found = true
		} else if v, ok := bytes.CutPrefix(kv, []byte(SessionEnv+"=")); ok {
			m.session = string(v)
		} else if v, ok := bytes.CutPrefix(kv, []byte(OwnerEnv+"=")); ok {
			m.owner = string(v)
		}
	}
	return m, found
}

// StopMarked ends every process carrying task's mark and owner's (ownedBy:
// another engine's agents on this machine are never touched) whose session
// is older than keep ("" keeps none): SIGTERM, then SIGKILL to those still
// alive after grace, then a wait of up to grace for them to be gone.
// keep and every later session of the task are spared (session ids are
// ULIDs, made in order: OlderSession), so a superseded session's sweep
// never ends its successor's agent. Signals go through a pidfd opened
// while the mark was checked, so a pid reused in between is never
// signalled. It returns a *RemainError naming the pids still alive at the
// end instead of waiting longer.
func StopMarked(owner, task, keep string, grace time.Duration) error {
	err := stopMarked(owner, task, func(s string) bool { return OlderSession(s, keep) }, 0, grace)
	// A process that exec'd with a clean environment has no marks, but
	// stays in its session's cgroup where there is one.
	return errors.Join(err, endTaskCgroups(owner, task, keep, grace))
}

// stopSession ends every process of task carrying session's mark and
// owner's except skip (the session's leader, which its waiter reaps).
func stopSession(owner, task, session string, skip int, grace time.Duration) error {
	if task == "" || session == "" {
		return nil
	}
	return stopMarked(owner, task, func(s string) bool { return s == session }, skip, grace)
}

func stopMarked(owner, task string, match func(string) bool, skip int, grace time.Duration) error {
	var fds []int
	var pids []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, p := range Marked(owner, task) {
		if !match(p.Session) || p.Pid == skip {
			continue
		}
		fd, err := unix.PidfdOpen(p.Pid, 0)
		if err != nil {
			continue // already gone
		}
		// The pid could have been reused between the scan and the open:
		// check the mark again on the process the pidfd holds.
		if env, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/environ"); err != nil {
			unix.Close(fd)
			continue
		} else if m, ok := marks(env, []byte(TaskEnv+"="+task)); !ok || !ownedBy(m.owner, owner) {
			unix.Close(fd)
			continue
		}
		fds = append(fds, fd)
		pids = append(pids, p.Pid)
	}
	if len(fds) == 0 {
		return nil
	}
	return endAll(fmt.Sprintf("stop processes of task %s", task), fds, pids, grace)
}

// endAll signals the processes behind fds with SIGTERM, waits up to grace
// for them to exit, SIGKILLs the rest and waits up to grace again.
func endAll(what string, fds, pids []int, grace time.Duration) error {
	signal(fds, unix.SIGTERM)
	alive := waitGone(fds, grace)
	if len(alive) == 0 {
		return nil
	}
	var left []int
	for _, i := range alive {
		left = append(left, fds[i])
	}
	signal(left, unix.SIGKILL)
	still := waitGone(left, max(grace, time.Second))
	if len(still) == 0 {
		return nil
	}
	var rem []int
	for _, i := range still {
		rem = append(rem, pids[slices.Index(fds, left[i])])
	}
	return &RemainError{What: what, Pids: rem}
}

func signal(fds []int, sig unix.Signal) {
	for _, fd := range fds {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}

// waitGone waits until every process behind fds has exited (a pidfd polls
// readable then), reaping those that are this process's children (the
// subreaper inherits daemonised descendants), or until d has passed. It
// returns the indexes of those still alive.
func waitGone(fds []int, d time.Duration) []int {
	deadline := time.Now().Add(d)
	alive := make([]int, len(fds))
	for i := range fds {
		alive[i] = i
	}
	for len(alive) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		pfds := make([]unix.PollFd, len(alive))
		for j, i := range alive {
			pfds[j] = unix.PollFd{Fd: int32(fds[i]), Events: unix.POLLIN}
		}
		n, err := unix.Poll(pfds, int(left/time.Millisecond)+1)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			break
		}
		if n <= 0 {
			continue
		}
		var next []int
		for j, i := range alive {
			if pfds[j].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 {
				reapFD(fds[i])
				continue
			}
			next = append(next, i)
		}
		alive = next
	}
	return alive
}

// reapFD collects the exited process behind fd if it is this process's
// child, so the subreaper leaves no zombie; for any other it does nothing.
func reapFD(fd int) {
	var info unix.Siginfo
	_ = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
}

// signalSession sends sig to the session's marked processes (owner's)
// other than skip, without waiting.
func signalSession(owner, task, session string, skip int, sig syscall.Signal) {
	if task == "" || session == "" {
		return
	}
	for _, p := range Marked(owner, task) {
		if p.Session == session && p.Pid != skip {
			_ = syscall.Kill(p.Pid, sig)
		}
	}
}
