//go:build linux

package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// needCgroup skips where the machine delegates no cgroup v2 (CI must have
// one: the cgroup tests are the only proof of that mechanism).
func needCgroup(t *testing.T) string {
	t.Helper()
	base, why := cgroupBase()
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must offer a delegated cgroup v2: %s", why)
		}
		t.Skipf("no cgroup v2 to test with: %s", why)
	}
	return base
}

// A descendant that left the session (setsid), ignores SIGHUP and SIGTERM
// and exec'd with an empty environment carries no mark: only the session's
// cgroup still holds it, and Stop ends it there. The cgroup is removed.
func TestStopEndsAnUnmarkedDescendantThroughTheCgroup(t *testing.T) {
	t.Parallel()
	base := needCgroup(t)
	require.Contains(t, TreeMechanism(), "cgroup v2")
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	script := `setsid env -i sh -c 'trap "" HUP TERM; echo $$ > "$0"; exec sleep 600' "` + pidFile + `" &
while [ ! -s "` + pidFile + `" ]; do sleep 0.01; done; echo daemon-started; echo 'ready>'; exec sleep 600`
	b := setup(t, shSpec(script, `ready>`), func(p *Params) { p.TaskID, p.SessionID = "T-cg", "S-cg" })
	pid := readPid(t, b, pidFile)
	require.NoError(t, syscall.Kill(pid, 0), "the daemon runs")
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	require.NoError(t, err)
	_, marked := marks(env, []byte(TaskEnv+"=T-cg"))
	require.False(t, marked, "the daemon carries no mark")
	dir := filepath.Join(base, cgroupName("", "T-cg", "S-cg"))
	require.Contains(t, cgroupProcs(dir), pid, "the daemon is in the session's cgroup")

	require.NoError(t, b.s.Stop(200*time.Millisecond))
	require.True(t, gone(pid), "daemon %d outlived its session", pid)
	require.NoDirExists(t, dir)
}

// Before a task's next session starts, StopMarked ends every process in
// the cgroups of the task's other sessions (a survivor of a killed console
// with a clean environment), keeps the session named, and removes the
// emptied cgroups.
func TestStopMarkedEndsAnotherSessionsCgroup(t *testing.T) {
	t.Parallel()
	base := needCgroup(t)
	start := func(session string) *exec.Cmd {
		cg := newCgroup("", "T-cgfence", session)
		require.NotNil(t, cg)
		cmd := exec.Command("sleep", "600")
		cmd.Env = []string{} // no marks
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cg.attach(cmd.SysProcAttr)
		require.NoError(t, cmd.Start())
		cg.started()
		return cmd
	}
	old, keep := start("S-1old"), start("S-2new")
	exited := make(chan struct{})
	go func() { _ = old.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = keep.Process.Kill()
		_ = keep.Wait()
		_ = os.Remove(filepath.Join(base, cgroupName("", "T-cgfence", "S-2new")))
	})
	require.Empty(t, Marked("", "T-cgfence"), "no process carries a mark")

	require.NoError(t, StopMarked("", "T-cgfence", "S-2new", time.Second))
	select {
	case <-exited:
	case <-time.After(waitLimit):
		t.Fatal("the old session's process outlived StopMarked")
	}
	require.NoDirExists(t, filepath.Join(base, cgroupName("", "T-cgfence", "S-1old")))
	require.NoError(t, syscall.Kill(keep.Process.Pid, 0), "the kept session's process still runs")
}
