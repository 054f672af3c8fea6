package e2e

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An engine under SIGSTOP mid-implement: `correct` fails naming its pid
// and `status` says so, each at once; `stop` ends it and keeps its agent;
// the next engine takes the same agent up, with no requeue.
func TestAStoppedEngineIsSaidEndedByStopAndItsAgentAdopted(t *testing.T) {
	parallel(t)
	f := newRepoFixture(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall, AwaitDecision: true}},
	}}, "")
	t.Cleanup(func() { _, _ = runIn(f, "stop") })
	f.orch(t, "engine")
	f.addTask(t, "Fix calc", "implement")
	waitLedger(t, f.root, task.EvBriefDelivered)
	id, agentPid := launchedAgent(t, f.root)

	p := engine.PathsFor(f.root)
	pid := engine.LockHolder(p.Lock)
	require.Positive(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.Eventually(t, func() bool { return engine.Stopped(pid) }, 30*time.Second, 10*time.Millisecond)
	says := "the engine (pid " + strconv.Itoa(pid) + ") is stopped"

	// Each command is a fresh process of the race-built binary, whose own
	// start takes a while on a loaded machine; the dial itself gives up
	// within 100ms (engine's test measures it), and the figure is logged.
	start := time.Now()
	out, err := runIn(f, "correct", string(id), "use", "ints")
	t.Logf("correct answered in %s", time.Since(start))
	require.Error(t, err)
	require.Contains(t, out, says)
	require.Less(t, time.Since(start), 20*time.Second, "correct waited for the stopped engine")

	start = time.Now()
	out, err = runIn(f, "status")
	t.Logf("status answered in %s", time.Since(start))
	require.NoError(t, err, out)
	require.Contains(t, out, "note: "+says)
	require.Contains(t, out, "Fix calc")

	out, err = runIn(f, "stop")
	require.NoError(t, err, out)
	require.Contains(t, out, "engine (pid "+strconv.Itoa(pid)+") was stopped (SIGSTOP) and could not answer: ended it")
	require.False(t, engine.Held(p.Lock), "the stopped engine still holds its lock")
	require.NoError(t, alive(agentPid), "the agent died with its engine")

	f.orch(t, "engine")
	require.Eventually(t, func() bool { return countLedger(t, f.root, id, task.EvSessionAdopted) == 1 },
		60*time.Second, 50*time.Millisecond, "the next engine never took the agent up")
	require.Zero(t, countLedger(t, f.root, id, task.EvTaskRequeued), "the task was requeued")
	require.NoError(t, alive(agentPid))
	require.NotEqual(t, pid, engine.LockHolder(p.Lock))
}

// countLedger counts the task's events of kind.
func countLedger(t *testing.T, root string, id task.ID, kind task.Kind) int {
	t.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	evs, err := st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
