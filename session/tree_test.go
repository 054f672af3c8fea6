package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// readPid waits on the session's screen for the script to say it wrote its
// daemon's pid, then reads it.
func readPid(t *testing.T, b bundle, file string) int {
	t.Helper()
	waitFor(t, b.s, "the daemon's pid", func() bool { return strings.Contains(b.s.View().Text(), "daemon-started") })
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	return pid
}

// gone reports whether pid no longer exists at all (not even a zombie).
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

// A descendant that started a session of its own and ignores SIGHUP and
// SIGTERM (nohup, setsid) is ended with its session by Stop, and reaped:
// nothing of the session outlives it.
func TestStopEndsADaemonisedDescendant(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	script := `setsid sh -c 'trap "" HUP TERM; echo $$ > "$0"; exec sleep 600' "` + pidFile + `" &
while [ ! -s "` + pidFile + `" ]; do sleep 0.01; done; echo daemon-started; echo 'ready>'; exec sleep 600`
	b := setup(t, shSpec(script, `ready>`), func(p *Params) { p.TaskID, p.SessionID = "T-tree", "S-tree" })
	pid := readPid(t, b, pidFile)
	require.NoError(t, syscall.Kill(pid, 0), "the daemon runs")
	sid, err := unix.Getsid(pid)
	require.NoError(t, err)
	require.NotEqual(t, b.s.Pid(), sid, "the daemon left the session's process group and session")

	require.NoError(t, b.s.Stop(200*time.Millisecond))
	require.True(t, gone(pid), "daemon %d outlived its session", pid)
}

// A program that exits by itself takes its daemonised descendants with it.
func TestExitEndsADaemonisedDescendant(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	script := `setsid sh -c 'trap "" HUP TERM; echo $$ > "$0"; exec sleep 600' "` + pidFile + `" &
while [ ! -s "` + pidFile + `" ]; do sleep 0.01; done; echo daemon-started; read -r line`
	b := setup(t, shSpec(script, `daemon-started`), func(p *Params) { p.TaskID, p.SessionID = "T-exit", "S-exit" })
	pid := readPid(t, b, pidFile)
	require.NoError(t, b.s.Write([]byte("bye\r")))
	select {
	case <-b.s.Done():
	case <-time.After(waitLimit):
		t.Fatal("the session did not end")
	}
	require.True(t, gone(pid), "daemon %d outlived its session", pid)
}

// StopMarked ends a process of the task that is no child of this process
// at all (the survivor of a killed console), and keeps the session named.
func TestStopMarkedFencesAnotherConsolesSurvivor(t *testing.T) {
	t.Parallel()
	survivor := exec.Command("sleep", "600")
	survivor.Env = append(os.Environ(), TaskEnv+"=T-fence", SessionEnv+"=S-1old")
	keep := exec.Command("sleep", "600")
	keep.Env = append(os.Environ(), TaskEnv+"=T-fence", SessionEnv+"=S-2new")
	require.NoError(t, survivor.Start())
	require.NoError(t, keep.Start())
	t.Cleanup(func() { _ = keep.Process.Kill(); _ = keep.Wait() })
	exited := make(chan struct{})
	go func() { _ = survivor.Wait(); close(exited) }()

	var sessions []string
	for _, p := range Marked("", "T-fence") {
		sessions = append(sessions, p.Session)
	}
	require.ElementsMatch(t, []string{"S-1old", "S-2new"}, sessions)
	require.NoError(t, StopMarked("", "T-fence", "S-2new", time.Second))
	<-exited
	require.NoError(t, syscall.Kill(keep.Process.Pid, 0), "the kept session's process still runs")
	require.Len(t, Marked("", "T-fence"), 1)
}

// A superseded session's sweep (its launch still under way when its
// successor started, in the fault run) ends the sessions before it and
// never its successor's agent: session ids sort in the order they were
// made.
func TestStopMarkedSparesTheSessionsAfterTheOneKept(t *testing.T) {
	t.Parallel()
	start := func(session string) (*exec.Cmd, chan struct{}) {
		cmd := exec.Command("sleep", "600")
		cmd.Env = append(os.Environ(), TaskEnv+"=T-order", SessionEnv+"="+session)
		require.NoError(t, cmd.Start())
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
		return cmd, done
	}
	now := time.Now()
	older, superseded, successor := task.NewULID(now), task.NewULID(now), task.NewULID(now)
	_, olderDone := start(older)
	next, _ := start(successor)
	require.NoError(t, StopMarked("", "T-order", superseded, time.Second))
	<-olderDone
	require.NoError(t, syscall.Kill(next.Process.Pid, 0), "the successor's agent was stopped by the superseded session's sweep")
	require.Len(t, Marked("", "T-order"), 1)
}

func TestRemainErrorNamesThePids(t *testing.T) {
	t.Parallel()
	err := &RemainError{What: "stop harness \"x\"", Pids: []int{12, 34}}
	require.Contains(t, err.Error(), "process(es) 12, 34 still alive after SIGKILL")
}
