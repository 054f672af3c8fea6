package coord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// On GitHub (its stub): an issue read again unchanged says nothing; an
// edit of its title, body and verify block after launch is one decision
// quoting what changed, typed into the live pane once, however often
// this source, a restarted one and a second one on the same store read
// it; the task's verify command is not changed by it.
func TestAnIssueEditAfterLaunchIsOneQuotingDecision(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)
	gh, f := githubRepo(t, "ghp_edit_test_token")
	body := project.Goal + "\n\n```verify\n" + project.VerifyCommand + "\n```\n"
	n := gh.AddIssue("alice", "Fix calc", body, "orchestra", "harness:scripted", "pipeline:implement")
	cfg := SourceConfig{Forge: f, Key: "github team/app", Label: "orchestra", Verify: project.VerifyCommand, Interval: time.Second}
	src := NewSource(b.c, cfg)
	ctx := context.Background()
	require.NoError(t, src.Poll(ctx))
	id := IssueTaskID(cfg.Key, n)
	b.waitEvent(t, 60*time.Second, kindIs(task.EvSessionLaunched))
	b.waitRecord(t, 30*time.Second, "the brief", func() bool { return len(b.inputsOf(t, agent.InputBrief)) == 1 })
	for range 3 {
		require.NoError(t, src.Poll(ctx))
	}
	ds, err := b.st.DecisionList(ctx, id)
	require.NoError(t, err)
	require.Empty(t, ds, "an unchanged issue is no decision")

	gh.EditIssue(n, "Fix calc and sub", "Also make Sub right: edit-probe.\n\n```verify\nrm -rf / # edit-verify\n```\n")
	require.NoError(t, src.Poll(ctx))
	require.NoError(t, src.Poll(ctx))
	require.NoError(t, NewSource(b.c, cfg).Poll(ctx), "an engine started again")
	require.NoError(t, NewSource(b.c, cfg).Poll(ctx), "a second engine on the store")
	ds, err = b.st.DecisionList(ctx, id)
	require.NoError(t, err)
	require.Len(t, ds, 1, "one decision per edit")
	text := ds[0].Text
	require.Contains(t, text, "The title changed from «#1 Fix calc» to «#1 Fix calc and sub»")
	require.Contains(t, text, "It now reads:\n    Also make Sub right: edit-probe.")
	require.Contains(t, text, "does NOT take effect")
	require.Equal(t, "alice (forge)", ds[0].Author)
	b.waitRecord(t, 30*time.Second, "the edit", func() bool {
		n := 0
		for _, r := range b.inputsOf(t, agent.InputDecision) {
			if strings.Contains(r.Text, "edit-probe") {
				n++
			}
		}
		return n == 1
	})
	stored, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, project.VerifyCommand, stored.Verify, "an edit never changes a launched task's verify")
	require.NoError(t, b.c.key.check(stored), "the task's signature still checks")
}
