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
