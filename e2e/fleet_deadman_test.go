package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// procStat is the state letter of pid ('T' stopped) and its CPU time in
// clock ticks (utime+stime), from /proc/PID/stat.
func procStat(pid int) (state byte, ticks int64, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("short stat %q", s)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return f[0][0], ut + st, nil
}

// TestFleetAnEngineStoppedAloneLeavesItsAgentFrozen: machine-a's engine
// alone is stopped (SIGSTOP) while its agent works; its session host, no
// longer trusted after the engine's last heartbeat, freezes the agent
// itself before the TTL, so by the time machine-b's takeover is recorded,
// and while machine-b's agent runs, machine-a's agent is stopped and uses
// no CPU. Once machine-a's engine runs again it stands up and stops that
// agent, which never ran again, and the task ends green once, on
// machine-b, its attempt uncharged.
func TestFleetAnEngineStoppedAloneLeavesItsAgentFrozen(t *testing.T) {
	parallel(t)
	f, ids, b, agentA, ea := stopEngineAlone(t)
	id := ids[0]
	ctx := context.Background()
	stopped := time.Now()
	a := f.engineOf(t, "machine-a")

	var takeover task.Event
	f.waitStore(t, time.Minute, "machine-b takes T over", func() bool {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
		require.NoError(t, err)
		for _, ev := range evs {
			if ev.Reason == task.ReasonLeaseOrphaned {
				takeover = ev
				return true
			}
		}
		return false
	})
	state, ticks, err := procStat(agentA.Pid)
	require.NoError(t, err)
	require.Equal(t, byte('T'), state, "machine-a's agent (pid %d) is not frozen when machine-b takes its task over (%.1fs after its engine was stopped)",
		agentA.Pid, time.Since(stopped).Seconds())
	t.Logf("taken over %s after machine-a's engine was stopped, %s after its last heartbeat (TTL %s); its agent was frozen by then",
		time.Since(stopped).Round(time.Millisecond), takeover.At.Sub(a.HeartbeatAt).Round(time.Millisecond), fleetTTL)

	f.waitStore(t, time.Minute, "machine-b's agent is live", func() bool { return len(f.liveSessions(t, ids, b.ID)) == 1 })
	state, still, err := procStat(agentA.Pid)
	require.NoError(t, err)
	require.Equal(t, byte('T'), state, "machine-a's agent runs beside machine-b's")
	require.Equal(t, ticks, still, "machine-a's agent used CPU after the takeover")
	// Its host's log says why (read now: a host collected by an engine
	// removes its log).
	logs, err := filepath.Glob(filepath.Join(host.Dir(ea.dir), "*.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	hl, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	require.Contains(t, string(hl), fmt.Sprintf("agent (pid %d) frozen: no trust from an engine", agentA.Pid))

	// machine-a's engine runs again: its stand-up stops the frozen agent
	// without thawing it (a trust would), and T ends green on machine-b.
	require.NoError(t, syscall.Kill(ea.cmd.Process.Pid, syscall.SIGCONT))
	waitExit(t, agentA.Pid, time.Minute)
	f.correct(t, "machine-b", id, "go ahead")
	f.waitStore(t, 5*time.Minute, "T green on machine-b", func() bool { return f.allAwaiting(t, ids) })
	sessions := f.checkFinished(t, ids)
	require.Len(t, sessions[id], 2, "one session on each machine: %v", sessions[id])
	require.Equal(t, b.ID, sessions[id][1].Holder)
	tk, err := f.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, tk.Attempt, "the takeover charged no attempt")
	all, err := f.st.VerdictList(ctx, id)
	require.NoError(t, err)
	var vs []store.VerdictRecord
	for _, v := range all {
		if v.SessionID != "" { // not the baseline, the tests before any change
			vs = append(vs, v)
		}
	}
	require.Len(t, vs, 1, "one session's verdict: %+v", vs)
	require.Equal(t, sessions[id][1].ID, vs[0].SessionID, "the verdict is machine-b's session's")
}

// TestFleetARestartedEngineThawsTheAgentItsHostFroze: machine-a's engine
// is killed (SIGKILL) while its agent waits for a decision; its session
// host, no longer trusted, freezes the agent; machine-a's next engine takes
// the session up, and its next heartbeat's trust thaws the agent, which
// takes the correction and ends the task green in the one session.
func TestFleetARestartedEngineThawsTheAgentItsHostFroze(t *testing.T) {
	parallel(t)
	f := newFleetWith(t, []string{"machine-a"}, 1, awaitingFix())
	ctx := context.Background()
	f.start(t, "machine-a")
	ids := f.add(t, "machine-a", 1)
	id := ids[0]
	a := f.engineOf(t, "machine-a")
	f.waitStore(t, 3*time.Minute, "machine-a runs T's agent", func() bool { return len(f.liveSessions(t, ids, a.ID)) == 1 })
	s := f.liveSessions(t, ids, a.ID)[0]
	agentA := f.launched(t, s)

	e := f.engines["machine-a"]
	require.NoError(t, e.cmd.Process.Signal(syscall.SIGKILL))
	<-e.done
	killed := time.Now()
	// Nothing tells of the freeze but the kernel: its state is read
	// until it shows.
	require.Eventually(t, func() bool {
		state, _, err := procStat(agentA.Pid)
		return err == nil && state == 'T'
	}, 30*time.Second, 10*time.Millisecond, "the host never froze its agent after its engine died")
	t.Logf("the agent was frozen %s after its engine was killed (trust window %s)", time.Since(killed).Round(time.Millisecond), fleetTTL-fleetTTL/3)

	f.start(t, "machine-a")
	f.waitStore(t, time.Minute, "machine-a's next engine takes the session up", func() bool {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
		require.NoError(t, err)
		for _, ev := range evs {
			if ev.Kind == task.EvSessionAdopted && ev.SessionID == s.ID {
				return true
			}
		}
		return false
	})
	// The frozen agent could take no decision: it is green only if the
	// trust thawed it.
	f.correct(t, "machine-a", id, "go ahead")
	f.waitStore(t, 5*time.Minute, "T green", func() bool { return f.allAwaiting(t, ids) })
	sessions := f.checkFinished(t, ids)
	require.Len(t, sessions[id], 1, "the one session, taken up: %v", sessions[id])
	require.Equal(t, s.ID, sessions[id][0].ID)
	tk, err := f.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, tk.Attempt)
}
