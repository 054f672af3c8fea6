package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A session host killed with SIGKILL three times (once more than
// max_attempts) is the machine's failure each time: the real engine
// relaunches the phase with its continuity, names the dead host in a
// refusal, charges no attempt, and the fourth session finishes green.
func TestKilledSessionHostsAreNotChargedToTheTask(t *testing.T) {
	parallel(t)
	f := newRepoFixture(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{AwaitDecision: true, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, "")
	t.Cleanup(func() { _, _ = runIn(f, "stop") })
	f.orch(t, "engine")
	f.addTask(t, "Fix calc", "implement")

	st, err := sqlite.Open(sqlite.DefaultPath(f.root))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	// launched waits for the n-th session's brief and returns its task and
	// launch data.
	launched := func(n int) (task.ID, coord.LaunchedData) {
		t.Helper()
		tick := time.NewTicker(lookInterval)
		defer tick.Stop()
		deadline := time.After(2 * time.Minute)
		for {
			evs, err := st.EventList(ctx, store.EventListParams{})
			require.NoError(t, err)
			var briefed []string
			for _, e := range evs {
				if e.Kind == task.EvBriefDelivered {
					briefed = append(briefed, e.SessionID)
				}
			}
			if len(briefed) >= n {
				for _, e := range evs {
					if e.Kind == task.EvSessionLaunched && e.SessionID == briefed[n-1] {
						var d coord.LaunchedData
						require.NoError(t, json.Unmarshal(e.Data, &d))
						return e.TaskID, d
					}
				}
			}
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("session %d was not briefed within 2 minutes", n)
			}
		}
	}
	var id task.ID
	var killed []int
	for n := 1; n <= 3; n++ {
		var d coord.LaunchedData
		id, d = launched(n)
		require.Positive(t, d.HostPid, "the engine runs its sessions in session hosts")
		require.NoError(t, syscall.Kill(d.HostPid, syscall.SIGKILL))
		killed = append(killed, d.HostPid)
	}
	_, d := launched(4)
	require.NotContains(t, killed, d.HostPid)
	f.orch(t, "correct", string(id), "go on")
	waitLedger(t, f.root, task.EvTaskAwaiting)

	tk, err := st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateAwaitingReview, tk.State)
	require.Equal(t, 1, tk.Attempt, "no host's death was charged")
	evs, err := st.EventList(ctx, store.EventListParams{TaskID: id})
	require.NoError(t, err)
	var refusals []string
	for _, e := range evs {
		if e.Kind == task.EvRefusal && e.Reason == task.ReasonHostLost {
			refusals = append(refusals, e.Text)
		}
		require.NotEqual(t, task.EvDeadEnd, e.Kind, "a host's death is no dead end: %s", e.Text)
	}
	require.Len(t, refusals, 3)
	for i, text := range refusals {
		require.Contains(t, text, fmt.Sprintf("session host (pid %d) died", killed[i]))
	}
	ss, err := st.SessionList(ctx, id)
	require.NoError(t, err)
	require.Len(t, ss, 4)
	require.Contains(t, ss[3].Brief, task.HeadingContinuity, "the relaunch got the lost session's continuity")
}
