package coord

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A worktree that cannot be prepared is the machine's failure, not the
// task's: it is refused at once, retried with backoff, and never charged as
// an attempt; once the machine is fixed the task launches as attempt 1.
func TestInfrastructureFailureIsRetriedAndNotCharged(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	// A file where the worktrees directory belongs: every add fails.
	blocker := filepath.Join(b.root, filepath.FromSlash(repo.WorktreesDir))
	require.NoError(t, os.MkdirAll(filepath.Dir(blocker), 0o700))
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})

	for range 2 {
		ev := b.waitEvent(t, 30*time.Second, refusalOf(task.ReasonWorktreeFailed))
		require.Contains(t, ev.Text, "no attempt is counted")
		b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskRequeued))
	}
	tk, err := b.st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 0, tk.Attempt, "an infrastructure failure was charged as an attempt")
	require.Equal(t, task.StateQueued, tk.State)

	require.NoError(t, os.Remove(blocker))
	launched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.Contains(t, launched.Text, "attempt 1")
}

// The backoff doubles per failure up to its cap, and a launch that went
// live (clear) starts it again at the first delay.
func TestInfraRetryBacksOffAndClears(t *testing.T) {
	t.Parallel()
	var b infraRetry
	now := time.Unix(1_700_000_000, 0)
	require.Equal(t, infraFirstRetry, b.fail("t1", now))
	require.Equal(t, 2*infraFirstRetry, b.fail("t1", now))
	require.True(t, b.waiting("t1", now.Add(infraFirstRetry)))
	require.False(t, b.waiting("t1", now.Add(2*infraFirstRetry)))
	for range 10 {
		b.fail("t1", now)
	}
	require.Equal(t, infraMaxRetry, b.fail("t1", now))

	b.clear("t1")
	require.False(t, b.waiting("t1", now))
	require.Equal(t, infraFirstRetry, b.fail("t1", now), "a live launch resets the backoff")
}
