package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestFleetFaults chains the faults a fleet of two engines on one real
// PostgreSQL must weather, on one fleet to keep CI short:
//
//  1. a machine frozen (SIGSTOP of its engine, session hosts and agents)
//     during a verify gate, past the TTL, then resumed: the other engine
//     takes the task over; the frozen engine's verdict is refused, the
//     remote branch's tip is the new holder's commit, and the new holder's
//     agent works on to the end;
//  2. `pg_ctl restart -m fast` with tasks queued: every one is placed
//     within 30 s of the restart, and no engine takes over another's task;
//  3. an outage of a minute: the same, and a console and `engines` showed
//     it while it lasted.
//
// Every task ends green, with no two live sessions of one task overlapping.
// outageLength is the database outage of TestFleetFaults: a minute, as an
// operator's maintenance window might be.
const outageLength = time.Minute

func TestFleetFaults(t *testing.T) {
	// About 100 s on a 2-core machine, 60 of them the outage, when it
	// gives its slot to other tests.
	parallel(t)
	cluster := pgtest.Start(t)
	pace := 10
	f := newFleetOn(t, cluster.NewDatabase(t), []string{"machine-a", "machine-b"}, 2, agent.Script{PaceMS: &pace,
		Phases: map[task.Phase][]agent.Entry{
			task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
		}})
	ctx := context.Background()
	began := time.Now()
	stage := func(what string) { t.Logf("%s: %s", time.Since(began).Round(100*time.Millisecond), what) }
	f.start(t, "machine-a")
	f.start(t, "machine-b")

	// 1. A machine frozen during a gate. The gate is slowed (5 s) so that
	// one is surely caught running: with 1 s, on a loaded machine, the
	// gate could end between the store's verify.started and the freeze.
	ids := f.addVerify(t, "machine-a", 2, "sleep 5 && "+project.VerifyCommand)
	var gated store.Session
	f.waitStore(t, 3*time.Minute, "a verify gate runs", func() bool {
		for _, id := range ids {
			evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
			require.NoError(t, err)
			for _, ev := range evs {
				if ev.Kind == task.EvVerifyStarted && ev.SessionID != "" {
					s, err := f.st.SessionGet(ctx, ev.SessionID)
					require.NoError(t, err)
					gated = s
					return true
				}
			}
		}
		return false
	})
	stage("a gate runs")
	frozenHost, otherHost := f.hostOf(t, gated.Holder)
	frozen := f.freezeMachine(t, frozenHost)
	taker := f.engineOf(t, otherHost)
	f.waitStore(t, time.Minute, "the other engine takes the gated task over and its agent is live", func() bool {
		ss, err := f.st.SessionList(ctx, gated.TaskID)
		require.NoError(t, err)
		for _, s := range ss {
			if s.Holder == taker.ID && s.Status == store.SessionConfirmed {
				return true
			}
		}
		return false
	})
	stage("taken over")
	f.thaw(frozen)
	f.waitStore(t, time.Minute, "the frozen engine's verdict is refused", func() bool {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: gated.TaskID})
		require.NoError(t, err)
		for _, ev := range evs {
			if ev.Reason == task.ReasonStaleLeaseToken && strings.Contains(ev.Text, "verdict") {
				return true
			}
		}
		return false
	})
	stage("verdict refused")

	// 2. A restart of the database, then work added at once: placement
	// resumes by itself, on every engine's free slots.
	f.waitStore(t, 3*time.Minute, "the first tasks green", func() bool { return f.allAwaiting(t, ids) })
	stage("first tasks green")
	start := time.Now()
	cluster.Restart(t)
	restarted := time.Now()
	queued := f.add(t, "machine-a", 4)
	t.Logf("pg restart took %s", restarted.Sub(start).Round(time.Millisecond))
	f.waitPlaced(t, queued, restarted, "after the restart")

	// 3. An outage of a minute (sixty TTLs) while they run, watched from
	// machine-b's console and its `engines` command. The test works
	// little meanwhile: its slot goes to other tests.
	cl, err := engine.Dial(ctx, engine.PathsFor(f.engines["machine-b"].dir).Socket, engine.Options{Watch: true, Kind: "console"})
	require.NoError(t, err)
	defer cl.Close()
	waiting(t)
	stage("the outage begins")
	outageAt := time.Now()
	cluster.Stop(t)
	shown, listed := false, ""
	for deadline := time.Now().Add(outageLength); time.Now().Before(deadline); {
		s := cl.Snapshot()
		shown = shown || s.StoreFault != "" || s.SteppedDown != ""
		if listed == "" && time.Since(outageAt) > outageLength/2 {
			cmd := exec.Command(f.bin, "engines", "-C", f.engines["machine-b"].dir)
			cmd.Env = f.env()
			out, err := cmd.Output()
			require.Error(t, err, "engines succeeded with the store down: %s", out)
			listed = string(out)
		}
		time.Sleep(50 * time.Millisecond) // the outage's own length: nothing to wait on
	}
	require.True(t, shown, "the console never showed the outage")
	require.Contains(t, listed, "PostgreSQL", "engines did not say the store is down")
	require.Contains(t, listed, "pg_isready", "engines gave no PostgreSQL advice")
	require.Contains(t, listed, "This machine's engine: ", "engines did not say what the engine saw")
	t.Logf("engines during the outage:\n%s", listed)
	cluster.Start(t)
	t.Logf("outage of %s while %d tasks ran", time.Since(outageAt).Round(time.Millisecond), len(queued))

	all := append(ids, queued...)
	f.waitStore(t, 5*time.Minute, "every task green", func() bool { return f.allAwaiting(t, all) })
	stage("every task green")
	f.noTakeover(t, queued, start)
	f.checkFinished(t, all)

	// The gated task: the fenced-out gate left no verdict, and the branch
	// on the remote is what the new holder pushed.
	vs, err := f.st.VerdictList(ctx, gated.TaskID)
	require.NoError(t, err)
	for _, v := range vs {
		require.NotEqual(t, gated.ID, v.SessionID, "the fenced-out gate's verdict landed")
	}
	ss, err := f.st.SessionList(ctx, gated.TaskID)
	require.NoError(t, err)
	last := ss[len(ss)-1]
	require.Equal(t, taker.ID, last.Holder)
	require.Equal(t, store.SessionExited, last.Status, "the new holder's agent was ended early")
	tk, err := f.st.TaskGet(ctx, gated.TaskID)
	require.NoError(t, err)
	out, err := exec.Command("git", "--git-dir", f.remote, "rev-parse", "refs/heads/"+tk.Branch).Output()
	require.NoError(t, err)
	tip := strings.TrimSpace(string(out))
	evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: gated.TaskID})
	require.NoError(t, err)
	pushedBy := ""
	for _, ev := range evs {
		if ev.Kind == task.EvBranchPushed && strings.Contains(ev.Text, repo.Abbrev(tip)) {
			pushedBy = ev.SessionID
		}
		require.False(t, ev.Kind == task.EvBranchPushed && ev.SessionID == gated.ID, "the fenced-out engine pushed: %s", ev.Text)
	}
	require.Equal(t, last.ID, pushedBy, "the remote branch's tip %s is not the new holder's push", repo.Abbrev(tip))
	t.Logf("machine %s frozen in its gate; %s's session %s pushed the tip %s", frozenHost, otherHost, last.ID, repo.Abbrev(tip))
}

// addVerify adds n implement-only calc tasks with the verify command v.
func (f *fleet) addVerify(t testing.TB, host string, n int, v string) []task.ID {
	t.Helper()
	var ids []task.ID
	for i := range n {
		cmd := exec.Command(f.bin, "add", "-C", f.engines[host].dir, "--title", fmt.Sprintf("fault %d", i+1),
			"--goal", project.Goal, "--verify", v, "--pipeline", "implement", "--harness", "scripted")
		cmd.Env = f.env()
		out, err := cmd.Output()
		require.NoError(t, err, "add: %s", out)
		fields := strings.Fields(string(out))
		require.NotEmpty(t, fields)
		ids = append(ids, task.ID(fields[len(fields)-1]))
	}
	return ids
}

// hostOf returns the machine of the engine holder and the other one.
func (f *fleet) hostOf(t testing.TB, holder string) (string, string) {
	t.Helper()
	es, err := f.st.EngineList(context.Background())
	require.NoError(t, err)
	for _, e := range es {
		if e.ID == holder {
			for h := range f.engines {
				if h != e.Host {
					return e.Host, h
				}
			}
		}
	}
	t.Fatalf("no engine %s", holder)
	return "", ""
}

// freezeMachine stops host's engine, its session hosts and their agents
// (SIGSTOP), as a machine that hangs; it returns what to thaw. The test's
// end thaws them in any case, so a failure leaves nothing stopped.
func (f *fleet) freezeMachine(t testing.TB, host string) []int {
	t.Helper()
	ctx := context.Background()
	e := f.engines[host]
	holder := f.engineOf(t, host).ID
	pids := []int{e.cmd.Process.Pid}
	require.NoError(t, syscall.Kill(e.cmd.Process.Pid, syscall.SIGSTOP))
	evs, err := f.st.EventList(ctx, store.EventListParams{})
	require.NoError(t, err)
	for _, ev := range evs {
		var d coord.LaunchedData
		if ev.Kind != task.EvSessionLaunched || json.Unmarshal(ev.Data, &d) != nil || d.Pid <= 1 {
			continue
		}
		if s, err := f.st.SessionGet(ctx, ev.SessionID); err != nil || s.Holder != holder {
			continue
		}
		if syscall.Kill(-d.Pid, syscall.SIGSTOP) == nil {
			pids = append(pids, -d.Pid)
		}
		if d.HostPid > 1 && syscall.Kill(d.HostPid, syscall.SIGSTOP) == nil {
			pids = append(pids, d.HostPid)
		}
	}
	t.Cleanup(func() { f.thaw(pids) })
	return pids
}

// thaw resumes what freezeMachine stopped, the engine first.
func (f *fleet) thaw(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGCONT)
	}
}

// waitPlaced waits until every task of ids is placed (no longer queued)
// and requires it within 30 s of since: placement resumes by itself.
func (f *fleet) waitPlaced(t *testing.T, ids []task.ID, since time.Time, what string) {
	t.Helper()
	f.waitStore(t, 3*time.Minute, "every queued task placed "+what, func() bool {
		for _, id := range ids {
			tk, err := f.st.TaskGet(context.Background(), id)
			if err != nil || tk.State == task.StateQueued {
				return false // queued, or the test's own connection is coming back
			}
		}
		return true
	})
	took := time.Since(since)
	t.Logf("every one of %d tasks placed %s %s", len(ids), took.Round(time.Millisecond), what)
	require.Less(t, took, 30*time.Second, "tasks placed %s %s", took, what)
}

// noTakeover requires that no task of ids was taken over since.
func (f *fleet) noTakeover(t *testing.T, ids []task.ID, since time.Time) {
	t.Helper()
	for _, id := range ids {
		evs, err := f.st.EventList(context.Background(), store.EventListParams{TaskID: id})
		require.NoError(t, err)
		for _, ev := range evs {
			if ev.Reason == task.ReasonLeaseOrphaned && !ev.At.Before(since) {
				t.Fatalf("task %s was taken over: %s\n%s", id, ev.Text, f.logs())
			}
		}
	}
}
