package coord

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// The stub's figures: training writes the cache, a fork or ping reads it.
var (
	stubTrain = modelstub.Usage{InputTokens: 1201, OutputTokens: 301, CacheCreationInputTokens: 4001}
	stubFork  = modelstub.Usage{InputTokens: 17, OutputTokens: 53, CacheReadInputTokens: 5600}
	stubPing  = modelstub.Usage{InputTokens: 9, OutputTokens: 2, CacheReadInputTokens: 5510}
)

// forkStub starts a model stub that answers a base's training, a fork's
// block and a keep-warm ping, each with its own usage.
func forkStub(t *testing.T) (*modelstub.Server, string) {
	t.Helper()
	last := func(r modelstub.Request) string {
		m, _ := r.LastUser()
		return m.Text
	}
	srv := modelstub.New([]modelstub.Rule{
		{Name: "ping", When: func(r modelstub.Request) bool { return strings.Contains(last(r), "Keep-warm ping") },
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "OK", Model: "claude-stub-kept", Usage: stubPing}
			}},
		{Name: "fork", When: func(r modelstub.Request) bool { return strings.Contains(last(r), "You are continuing") },
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "Block done: parser written.", Model: "claude-stub-kept", Usage: stubFork}
			}},
		{Name: "train", When: func(r modelstub.Request) bool { return strings.Contains(last(r), "## Goal") },
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "Read; waiting for the first block.", Model: "claude-stub-kept", Usage: stubTrain}
			}},
	})
	srv.Logf = t.Logf
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv, url
}

// TestKeepWarmPingAtItsDueTime trains a base through the coordinator with
// the real Claude Code against the stub, on a 3-second cache with a
// 1-second ping lead, and checks that the console pings it at its due time
// on its own, that the ping restarted the cache clock, and that a
// subscriber saw the policy's reason and the ping's usage as they happened,
// with the task's usage counting them live.
func TestKeepWarmPingAtItsDueTime(t *testing.T) {
	t.Parallel()
	bin := claudecli.Require(t)
	srv, url := forkStub(t)
	home := t.TempDir()
	b := setup(t, agent.Script{}, func(cfg *config.Config) {
		cfg.Harness["claude"] = modelstub.Harness(cfg.Harness["claude"], bin, home, url)
		// No slot runs claude: the task stays queued while its base is kept.
		cfg.Slots = []config.Slot{{Name: "scripted", Harness: "scripted", Capacity: 1}}
		cfg.Fork = config.Fork{CacheLifetime: config.Duration{Duration: 3 * time.Second},
			PingLead: config.Duration{Duration: time.Second}, ExpectedGap: config.Duration{Duration: 5 * time.Second}}
	})
	ctx := context.Background()
	id := b.addTask(t, "claude", project.VerifyCommand, task.Pipeline{task.PhaseImplement})
	require.NoError(t, modelstub.SeedHome(home, filepath.Join(b.root, ".orchestra", "worktrees", string(id))))

	start := time.Now()
	res, err := b.c.Do(ctx, Command{Kind: CmdForkTrain, TaskID: id[len(id)-6:]})
	require.NoError(t, err)
	t.Logf("trained in %s: %s", time.Since(start), res.Message)
	require.Contains(t, res.Message, "Trained base "+res.SessionID)
	baseID := res.SessionID
	trained := b.waitEvent(t, 5*time.Second, func(e task.Event) bool { return e.Kind == task.EvUsage && e.SessionID == baseID })
	require.Contains(t, trained.Text, "Base "+baseID[:8]+" trained")

	snap := b.c.Snapshot()
	require.Len(t, snap.Bases, 1)
	first := snap.Bases[0]
	require.Equal(t, fork.ActionKeepWarm, first.Next.Action, first.Next.Reason)
	due := first.Next.Due
	require.Equal(t, first.LastHit.Add(2*time.Second), due)

	// The ping: announced with the policy's reason at its due time, then
	// its usage, marked as a ping that read the cache.
	kept := b.waitEvent(t, 15*time.Second, kindIs(task.EvBasePolicy))
	require.Contains(t, kept.Text, "Keep-warm ping of base "+baseID[:8]+": Keep warm: 1 ping(s)")
	require.False(t, kept.At.Before(due), "pinged at %s, before its due time %s", kept.At, due)
	require.Less(t, kept.At.Sub(due), 750*time.Millisecond, "pinged late: due %s, at %s", due, kept.At)
	var pd PolicyData
	require.NoError(t, json.Unmarshal(kept.Data, &pd))
	require.Equal(t, fork.ActionKeepWarm, pd.Action)
	pinged := b.waitEvent(t, 15*time.Second, func(e task.Event) bool { return e.Kind == task.EvUsage && e.SessionID != baseID })
	var ud fork.UsageData
	require.NoError(t, json.Unmarshal(pinged.Data, &ud))
	require.True(t, ud.Ping)
	require.True(t, ud.Hit)
	require.Equal(t, baseID, ud.BaseID)
	t.Logf("ping due %s, sent %s, done %s", due.Format("15:04:05.000"), kept.At.Format("15:04:05.000"), pinged.At.Format("15:04:05.000"))

	// The clock restarted at the ping, and the task's usage counts the
	// base and the ping without a restart.
	var after BaseView
	for _, bv := range b.c.Snapshot().Bases {
		if bv.ID == baseID {
			after = bv
		}
	}
	require.Equal(t, 1, after.Forks)
	require.False(t, after.LastHit.Before(kept.At), "last hit %s, ping %s", after.LastHit, kept.At)
	require.True(t, after.Next.ExpiresAt.After(first.Next.ExpiresAt))
	u := b.taskView(t, id).Usage
	require.EqualValues(t, stubTrain.InputTokens+stubPing.InputTokens, u.InputTokens)
	require.EqualValues(t, stubPing.CacheReadInputTokens, u.CacheReadTokens)
	require.Contains(t, u.Models, "claude-stub-kept")

	var pings int
	for _, e := range srv.Exchanges() {
		if e.Rule == "ping" {
			pings++
		}
	}
	require.GreaterOrEqual(t, pings, 1)
}

// Without running an agent: a base whose pings would cost more than a
// retrain is let go once, with the policy's reason, and a base whose task
// has ended is retired and drops from the snapshot.
func TestKeeperLetsExpireOnceAndRetiresEndedTasks(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, func(cfg *config.Config) {
		cfg.Fork.ExpectedGap.Duration = 10 * time.Hour // hundreds of pings: a retrain is cheaper
		cfg.Slots = []config.Slot{{Name: "scripted", Harness: "scripted", Capacity: 1}}
	})
	b.stop()
	ctx := context.Background()
	now := time.Now().UTC()
	insert := func(title string, state task.State, baseID string) task.ID {
		tk := task.Task{ID: task.ID(task.NewULID(now)), Title: title, Goal: "g", Verify: "true", Repo: b.root,
			Pipeline: task.Pipeline{task.PhaseImplement}, Harness: "claude", State: state,
			Phase: task.PhaseImplement, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))
		var training usage.Totals
		training.Add(usage.Record{Model: "m", Tokens: usage.Tokens{Input: 1000, CacheCreation: 4000}}, nil)
		base := fork.Base{ID: baseID, TaskID: tk.ID, Harness: "claude", Model: "m",
			Launch: session.Launch{Binary: "/nonexistent/claude", Hash: "0123456789abcdef"}, Training: training,
			CreatedAt: now, LastHitAt: now}
		require.NoError(t, b.st.BaseInsert(ctx, base.Row()))
		return tk.ID
	}
	queued := insert("queued", task.StateQueued, "conv-queued")
	insert("done", task.StateCancelled, "conv-done")
	b.start(t)

	seen := map[string]task.Event{}
	b.waitEvent(t, 5*time.Second, func(e task.Event) bool {
		if e.Kind == task.EvBasePolicy {
			seen[e.SessionID] = e
		}
		return len(seen) == 2
	})
	require.Contains(t, seen["conv-queued"].Text, "Letting base conv-que expire: Let expire at")
	require.Equal(t, "Base conv-don retired: its task is cancelled.", seen["conv-done"].Text)
	b.barrier(t)
	b.barrier(t)
	require.Len(t, b.ledger(t, queued, kindIs(task.EvBasePolicy)), 1, "let go once")
	bases := b.c.Snapshot().Bases
	require.Len(t, bases, 1)
	require.Equal(t, "conv-queued", bases[0].ID)
	require.Equal(t, fork.ActionLetExpire, bases[0].Next.Action)
}
