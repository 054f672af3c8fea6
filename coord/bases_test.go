package coord

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// A trained base shows in the snapshot with its cache clock counted down at
// read time, and the usage its training and forks wrote to the ledger
// counts in the task's usage after a restart: fork.UsageData is read as
// this package's UsageData.
func TestSnapshotShowsBasesAndCountsForkUsage(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, nil)
	b.stop()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	tk := task.Task{ID: task.ID(task.NewULID(now)), Title: "parked", Goal: "g", Verify: "true", Repo: b.root,
		Pipeline: task.Pipeline{task.PhaseImplement}, Harness: "scripted", State: task.StateParked,
		Phase: task.PhaseImplement, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))

	const model = "claude-stub-answered"
	var training, forked usage.Totals
	training.Add(usage.Record{Model: model, Tokens: usage.Tokens{Input: 1201, Output: 301, CacheCreation: 4001}}, nil)
	forked.Add(usage.Record{Model: model, Tokens: usage.Tokens{Input: 17, Output: 53, CacheRead: 6007}}, nil)
	base := fork.Base{ID: "conv-base-1", TaskID: tk.ID, Harness: "claude", Model: model,
		Launch: session.Launch{Binary: "/bin/claude", Hash: "0123456789abcdef"}, Training: training,
		CreatedAt: now, LastHitAt: now.Add(-time.Minute)}
	usageEvent := func(d fork.UsageData) task.Event {
		ev := task.Event{TaskID: tk.ID, SessionID: d.SessionID, Kind: task.EvUsage, Text: "usage", At: now}
		ev.Data, _ = json.Marshal(d)
		return ev
	}
	require.NoError(t, b.st.BaseInsert(ctx, base.Row(),
		usageEvent(fork.UsageData{SessionID: base.ID, Phase: task.PhaseImplement, Totals: training, BaseID: base.ID, Role: fork.RoleBase}),
		usageEvent(fork.UsageData{SessionID: "conv-fork-1", Phase: task.PhaseImplement, Totals: forked, BaseID: base.ID, Role: fork.RoleFork, Hit: true})))
	b.start(t)
	b.barrier(t)

	snap := b.c.Snapshot()
	require.Len(t, snap.Bases, 1)
	bv := snap.Bases[0]
	require.Equal(t, base.ID, bv.ID)
	require.Equal(t, tk.ID, bv.TaskID)
	require.Equal(t, model, bv.Model)
	require.Equal(t, "0123456789ab", bv.Launch)
	require.Equal(t, base.LastHitAt.Add(5*time.Minute), bv.Next.ExpiresAt)
	require.InDelta(t, (4 * time.Minute).Seconds(), bv.ExpiresIn.Seconds(), 5)
	require.NotEmpty(t, bv.Next.Reason)

	// Six minutes on, the same base reads as expired and due a retrain.
	b.skew.Store(int64(6 * time.Minute))
	later := b.c.Snapshot().Bases[0]
	require.Zero(t, later.ExpiresIn)
	require.Equal(t, fork.ActionRetrain, later.Next.Action)

	u := b.taskView(t, tk.ID).Usage
	require.EqualValues(t, 1201+17, u.InputTokens)
	require.EqualValues(t, 301+53, u.OutputTokens)
	require.EqualValues(t, 4001, u.CacheCreationTokens)
	require.EqualValues(t, 6007, u.CacheReadTokens)
	require.Equal(t, []string{model}, u.Models)

	// Retiring a base through the coordinator's registry drops it from view.
	require.NoError(t, b.c.forks.reg.Retire(ctx, base.ID))
	require.Empty(t, b.c.Snapshot().Bases)
}
