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
	survivor.Env = append(os.Environ(), TaskEnv+"=T-fence", SessionEnv+"=S-old")
	keep := exec.Command("sleep", "600")
	keep.Env = append(os.Environ(), TaskEnv+"=T-fence", SessionEnv+"=S-new")
	require.NoError(t, survivor.Start())
	require.NoError(t, keep.Start())
	t.Cleanup(func() { _ = keep.Process.Kill(); _ = keep.Wait() })
	exited := make(chan struct{})
	go func() { _ = survivor.Wait(); close(exited) }()

	var sessions []string
	for _, p := range Marked("", "T-fence") {
		sessions = append(sessions, p.Session)
	}
	require.ElementsMatch(t, []string{"S-old", "S-new"}, sessions)
	require.NoError(t, StopMarked("", "T-fence", "S-new", time.Second))
	<-exited
	require.NoError(t, syscall.Kill(keep.Process.Pid, 0), "the kept session's process still runs")
	require.Len(t, Marked("", "T-fence"), 1)
}

func TestRemainErrorNamesThePids(t *testing.T) {
	t.Parallel()
	err := &RemainError{What: "stop harness \"x\"", Pids: []int{12, 34}}
	require.Contains(t, err.Error(), "process(es) 12, 34 still alive after SIGKILL")
}
