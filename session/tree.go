package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
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
//
// A third mark, OwnerEnv, names the engine that started the session: the
// repository clone it serves (OwnerMark), which one engine at a time holds
// (its lock) and the next engine there inherits with the sessions it adopts.
// Engines of one fleet may share a machine (two clones on one host, one
// store): every sweep by mark or cgroup matches its own owner's processes
// only, so one never signals another's agents (issue 23). A process marked
// before the owner mark existed (an older binary's, left for adoption) has
// none and is every owner's, as it was.
const (
	TaskEnv    = "ORCHESTRA_TASK"
	SessionEnv = "ORCHESTRA_SESSION"
	OwnerEnv   = "ORCHESTRA_OWNER"
)

// Proc is a live process carrying a task's mark.
type Proc struct {
	Pid     int
	Session string // its SessionEnv value
	Owner   string // its OwnerEnv value, "" for a process marked before it existed
}

// OwnerMark returns the owner mark of the engine serving the repository
// clone at root: a short hash of its absolute path, made only of the
// characters a cgroup name keeps (cgroupName).
func OwnerMark(root string) string {
	if root == "" {
		return ""
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:6])
}

// ownedBy reports whether a process whose owner mark is got belongs to the
// sweep of owner: owner "" sweeps every owner's (a caller with no engine,
// as before the mark), and a process with no owner mark (an older
// binary's) is every owner's.
func ownedBy(got, owner string) bool {
	return owner == "" || got == "" || got == owner
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

// OlderSession reports whether a process of session s is swept by a sweep
// that keeps session keep: keep "" keeps none; otherwise only sessions
// made before keep go (ids are ULIDs, which sort in the order they were
// made), so keep's successors live on.
func OlderSession(s, keep string) bool {
	return keep == "" || s < keep
}
