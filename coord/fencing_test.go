package coord

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// A report carrying a lease token that is not the task's current one is
// refused and recorded, and can never seal an artifact or finish a phase.
func TestStaleTokenReportIsRefusedAndSealsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	ctx := context.Background()
	brief := b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))
	token, err := b.st.TaskToken(ctx, id)
	require.NoError(t, err)

	artifact := []byte(task.Example(task.PhaseImplement))
	for _, rep := range []worker.Report{
		{Kind: worker.PhaseFinished, TaskID: id, SessionID: brief.SessionID, Token: token + 1, Artifact: artifact},
		{Kind: worker.PhaseFinished, TaskID: id, SessionID: "01OLDSESSION", Token: token, Artifact: artifact},
	} {
		b.c.reports <- rep
		refused := b.waitEvent(t, 10*time.Second, refusalOf(task.ReasonStaleLeaseToken))
		require.Equal(t, rep.SessionID, refused.SessionID)
		require.Contains(t, refused.Text, `"phase-finished"`)
	}
	b.barrier(t)
	arts, err := b.st.ArtifactList(ctx, id)
	require.NoError(t, err)
	require.Empty(t, arts, "a fenced-off report sealed nothing")
	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateRunning, tk.State, "the live session still holds the task")
	require.Len(t, b.ledger(t, id, refusalOf(task.ReasonStaleLeaseToken)), 2, "both refusals are in the ledger")

	// The store fences too: a stale token cannot seal, whoever asks.
	_, err = b.st.ArtifactSeal(ctx, store.ArtifactSealParams{TaskID: id, Token: token - 1, Phase: task.PhaseImplement,
		Content: artifact, SessionID: "01OLDSESSION", At: time.Now()})
	require.ErrorIs(t, err, store.ErrStaleToken)
}
