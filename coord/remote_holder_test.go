package coord

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// On a shared store, a lease held by an engine on another machine is judged
// by that engine's heartbeat, never by a pid of this machine: a fresh beat
// keeps the task its own, a stale one makes it an orphan, requeued without
// charging the attempt.
func TestReconcileJudgesAnotherHostsEngineByItsHeartbeat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		age    time.Duration
		orphan bool
	}{
		{"FreshHeartbeatKeepsTheLease", time.Second, false},
		{"StaleHeartbeatOrphansIt", 2 * EngineTTL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, agent.Script{}, nil)
			b.stop()
			ctx := context.Background()
			now := time.Now()
			// No process of this machine has this pid (it is above any
			// pid_max), so judged by pid the holder would be dead.
			remote := "console:2147483000:12345:remote-instance"
			require.NoError(t, b.st.EngineHeartbeat(ctx, store.Engine{ID: remote, Host: "another-machine",
				Pid: 2147483000, Slots: 1, Busy: 1, StartedAt: now.Add(-time.Hour), HeartbeatAt: now.Add(-tc.age)}))
			tk, err := Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Verify: project.VerifyCommand,
				Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, now)
			require.NoError(t, err)
			require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))
			l, err := b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: tk.ID, Holder: remote, ExpectState: task.StateQueued,
				GrantedAt: now, Deadline: now.Add(20 * time.Minute), Baseline: lease.Progress{At: now}})
			require.NoError(t, err)
			running := tk
			running.State, running.Attempt = task.StateRunning, 1
			require.NoError(t, b.st.TaskUpdate(ctx, store.TaskUpdateParams{Task: running, ExpectState: task.StateLeased, ExpectToken: l.Token}))

			b.start(t)
			b.barrier(t) // reconciled
			got, err := b.st.TaskGet(ctx, tk.ID)
			require.NoError(t, err)
			orphans := b.ledger(t, tk.ID, refusalOf(task.ReasonLeaseOrphaned))
			if !tc.orphan {
				require.Empty(t, orphans, "a live engine on another host keeps its task")
				require.Equal(t, task.StateRunning, got.State)
				_, err := b.st.LeaseGet(ctx, tk.ID)
				require.NoError(t, err, "its lease stays")
				return
			}
			require.Len(t, orphans, 1)
			require.Contains(t, orphans[0].Text, "Attempt 1 of phase implement is not counted")
		})
	}
}
