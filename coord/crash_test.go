package coord

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An agent that dies mid-phase leaves no process behind, does not finish
// the phase, and the task is relaunched; the second attempt goes green.
func TestCrashMidPhaseRequeuesAndRetries(t *testing.T) {
	t.Parallel()
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Attempt: 1, Behave: agent.BehaveCrash}, {Edits: fixed}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})

	pid := launchedPid(t, b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched)))
	crash := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvRefusal && e.Reason == task.ReasonSessionExited
	})
	require.Contains(t, crash.Text, "exited with code 3", b.dump())

	// The session is torn down before its exit is reported: nothing of
	// its process group is left.
	require.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "process group %d outlived the crash", pid)

	requeued := b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskRequeued))
	require.Equal(t, task.ReasonSessionExited, requeued.Reason)
	ctx := context.Background()
	arts, err := b.st.ArtifactList(ctx, id)
	require.NoError(t, err)
	require.Empty(t, arts, "a crashed attempt sealed nothing")
	sessions, err := b.st.SessionList(ctx, id)
	require.NoError(t, err)
	require.Equal(t, store.SessionExited, sessions[0].Status)
	require.Equal(t, agent.CrashExitCode, sessions[0].ExitCode)
	require.NotEmpty(t, sessions[0].Continuity, "the crash left a continuity record")

	pid2 := launchedPid(t, b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched)))
	require.NotEqual(t, pid, pid2)
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())

	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateAwaitingReview, tk.State)
	require.Equal(t, 2, tk.Attempt, "the second attempt finished it")
	deadEnds, err := b.st.DeadEndList(ctx, id)
	require.NoError(t, err)
	require.Len(t, deadEnds, 1)
	require.Contains(t, deadEnds[0].Text, "exited with code 3")
	brief2 := b.recordedBrief(task.PhaseImplement, 2, 1)
	require.Contains(t, brief2, deadEnds[0].Text, "the retry's brief names the crash as a dead end")
}
