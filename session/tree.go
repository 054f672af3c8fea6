package session

import (
	"fmt"
	"strconv"
	"strings"
)

// Every session's program starts with two marks in its environment, which
// its descendants inherit: TaskEnv names the task and SessionEnv the
// session. A descendant that starts a session of its own or daemonises
// (setsid, nohup, a double fork) leaves the program's process group, and
// once its parent dies it is re-parented to the console (the subreaper) or
// to init: the marks are how the console still finds it, to stop it with
// its session and to fence it out of the worktree before the next session
// of the task starts there. The marks are not a security boundary (a
// program can exec with a clean environment); where the machine delegates
// a cgroup v2, the session's cgroup holds that one too (cgroup_linux.go).
const (
	TaskEnv    = "ORCHESTRA_TASK"
	SessionEnv = "ORCHESTRA_SESSION"
)

// Proc is a live process carrying a task's mark.
type Proc struct {
	Pid     int
	Session string // its SessionEnv value
}

// RemainError names the processes a stop could not end within its grace.
type RemainError struct {
	What string
	Pids []int
}

func (e *RemainError) Error() string {
	ps := make([]string, len(e.Pids))
	for i, p := range e.Pids {
		ps[i] = strconv.Itoa(p)
	}
	return fmt.Sprintf("%s: process(es) %s still alive after SIGKILL; they may be stuck in the kernel (state D): see /proc/PID/status", e.What, strings.Join(ps, ", "))
}
