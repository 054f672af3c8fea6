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

// Two engines of a fleet on one machine (two clones, one store) may each
// have run task T: engine B holds a live agent of T (it took T over from
// A), and engine A sweeps T (the fencing before a launch, or the check at
// seal time). A's sweep ends A's own leftovers and an older binary's
// (no owner mark), never B's agent. Real processes: A's survivor is no
// child of any session, B's agent is a session of its own, with a
// descendant that left its group.
func TestStopMarkedLeavesAnotherEnginesAgents(t *testing.T) {
	t.Parallel()
	const id = "T-owners"
	ownerA, ownerB := OwnerMark(filepath.Join(t.TempDir(), "clone-a")), OwnerMark(filepath.Join(t.TempDir(), "clone-b"))
	require.NotEqual(t, ownerA, ownerB)

	// B's agent, started as B's engine starts it: a session with B's
	// owner mark, whose daemonised descendant keeps the marks.
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	script := `setsid sh -c 'trap "" HUP TERM; echo $$ > "$0"; exec sleep 600' "` + pidFile + `" &
while [ ! -s "` + pidFile + `" ]; do sleep 0.01; done; echo daemon-started; echo 'ready>'; exec sleep 600`
	b := setup(t, shSpec(script, `ready>`), func(p *Params) { p.TaskID, p.SessionID, p.Owner = id, "S-b", ownerB })
	daemonB := readPid(t, b, pidFile)
	env, err := os.ReadFile("/proc/" + strconv.Itoa(daemonB) + "/environ")
	require.NoError(t, err)
	m, ok := marks(env, []byte(TaskEnv+"="+id))
	require.True(t, ok)
	require.Equal(t, procMarks{session: "S-b", owner: ownerB}, m, "the descendant carries its engine's owner mark")

	// A's leftover of an earlier session, and one an older binary left
	// with no owner mark.
	start := func(extra ...string) (*exec.Cmd, chan struct{}) {
		cmd := exec.Command("sleep", "600")
		cmd.Env = append(os.Environ(), extra...)
		require.NoError(t, cmd.Start())
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
		return cmd, done
	}
	cmdA, leftA := start(TaskEnv+"="+id, SessionEnv+"=S-a", OwnerEnv+"="+ownerA)
	cmdOld, legacy := start(TaskEnv+"="+id, SessionEnv+"=S-old")

	// found is what owner finds, by pid. Every known process is checked by
	// its pid, and every other one found by its mark: a process of B's
	// agent may be starting or ending as /proc is read (a CI run once saw
	// a third S-b for a moment).
	found := func(owner string) map[int]string {
		out := map[int]string{}
		for _, p := range Marked(owner, id) {
			out[p.Pid] = p.Session
		}
		return out
	}
	finds := func(owner string, want map[int]string, others ...string) {
		t.Helper()
		got := found(owner)
		for pid, session := range want {
			require.Equal(t, session, got[pid], "owner %q finds pid %d: %v", owner, pid, got)
		}
		for pid, session := range got {
			if _, known := want[pid]; !known {
				require.Contains(t, others, session, "owner %q finds pid %d of another's session: %v", owner, pid, got)
			}
		}
	}
	agentB := b.s.Pid()
	finds(ownerA, map[int]string{cmdA.Process.Pid: "S-a", cmdOld.Process.Pid: "S-old"})
	finds(ownerB, map[int]string{agentB: "S-b", daemonB: "S-b", cmdOld.Process.Pid: "S-old"}, "S-b")
	finds("", map[int]string{cmdA.Process.Pid: "S-a", agentB: "S-b", daemonB: "S-b", cmdOld.Process.Pid: "S-old"}, "S-b")

	require.NoError(t, StopMarked(ownerA, id, "", time.Second))
	for what, done := range map[string]chan struct{}{"A's leftover": leftA, "the unowned leftover": legacy} {
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Fatalf("%s outlived A's sweep", what)
		}
	}
	require.NoError(t, syscall.Kill(b.s.Pid(), 0), "B's agent lives")
	require.NoError(t, syscall.Kill(daemonB, 0), "B's agent's descendant lives")
	select {
	case <-b.s.Done():
		t.Fatal("B's session ended")
	default:
	}
	finds(ownerB, map[int]string{agentB: "S-b", daemonB: "S-b"}, "S-b")
}

// Where sessions run in cgroups, A's sweep ends the cgroups of A's own
// sessions of the task and those named before the owner mark, and leaves
// B's cgroup and the process in it alone, even one with a clean
// environment (which only a cgroup finds).
func TestStopMarkedLeavesAnotherEnginesCgroups(t *testing.T) {
	t.Parallel()
	base := needCgroup(t)
	const id = "T-cgowners"
	ownerA, ownerB := OwnerMark(filepath.Join(t.TempDir(), "a")), OwnerMark(filepath.Join(t.TempDir(), "b"))
	start := func(owner, session string) (string, *exec.Cmd, chan struct{}) {
		cg := newCgroup(owner, id, session)
		require.NotNil(t, cg)
		cmd := exec.Command("sleep", "600")
		cmd.Env = []string{} // no marks at all
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cg.attach(cmd.SysProcAttr)
		require.NoError(t, cmd.Start())
		cg.started()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-done
			_ = os.Remove(cg.dir)
		})
		return cg.dir, cmd, done
	}
	dirA, _, doneA := start(ownerA, "S-a")
	dirOld, _, doneOld := start("", "S-old")
	dirB, b, doneB := start(ownerB, "S-b")
	require.Equal(t, filepath.Join(base, "orchestra-@"+ownerB+"-T_cgowners-S_b"), dirB)

	require.NoError(t, StopMarked(ownerA, id, "", time.Second))
	for _, done := range []chan struct{}{doneA, doneOld} {
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Fatal("a process of A's or an unowned cgroup outlived A's sweep")
		}
	}
	require.NoDirExists(t, dirA)
	require.NoDirExists(t, dirOld)
	select {
	case <-doneB:
		t.Fatal("B's process died in A's sweep")
	default:
	}
	require.NoError(t, syscall.Kill(b.Process.Pid, 0), "B's process lives")
	require.DirExists(t, dirB)
	require.Contains(t, cgroupProcs(dirB), b.Process.Pid)
}

// The owner mark is the clone's: the same for the same directory however
// it is named (the next engine there inherits its predecessor's sessions),
// different for another clone, and safe in a cgroup's name.
func TestOwnerMarkNamesTheClone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	require.Equal(t, OwnerMark(dir), OwnerMark(link))
	require.Equal(t, OwnerMark(dir), OwnerMark(dir+"/."))
	require.NotEqual(t, OwnerMark(dir), OwnerMark(t.TempDir()))
	require.Empty(t, OwnerMark(""))
	require.Equal(t, OwnerMark(dir), cleanMark(OwnerMark(dir)))
	owner, rest, ok := parseCgroupName(cgroupName(OwnerMark(dir), "T-1", "S-2"))
	require.True(t, ok)
	require.Equal(t, OwnerMark(dir), owner)
	require.Equal(t, "T_1-S_2", rest)
	owner, rest, ok = parseCgroupName(cgroupName("", "T-1", "S-2"))
	require.True(t, ok)
	require.Empty(t, owner)
	require.Equal(t, "T_1-S_2", rest)
}
