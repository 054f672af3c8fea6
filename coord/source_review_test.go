package coord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/github"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// On GitHub (its stub): a task whose issue is #N waits in pr-open; a line
// comment on its pull request by a writer is one decision anchored to the
// file and line, an outsider's one refusal, however often the source
// reads them; the review requesting changes sends the task back and the
// next session's brief carries the comment with its file and line. A
// comment carrying the status marker but written by someone else is not
// taken for the status comment.
func TestLineCommentsOfThePullRequestAreAnchoredCorrections(t *testing.T) {
	t.Parallel()
	b, gh, id := pullBundle(t)
	gh.SetPermission("alice", "write")
	f, err := github.New(forge.Config{Kind: forge.GitHub, URL: gh.URL, Repo: "team/app", Token: gh.Token})
	require.NoError(t, err)
	n := gh.AddIssue("alice", "Fix calc", project.Goal+"\n\n```verify\n"+project.VerifyCommand+"\n```\n", "orchestra")
	cfg := SourceConfig{Forge: f, Key: "github team/app", Label: "orchestra", Verify: project.VerifyCommand, Interval: time.Second}
	src := NewSource(b.c, cfg)
	// The green task stands for issue n's (its id is the coordinator's,
	// not derived: the source follows what it is told).
	src.track(n, id, false)
	ctx := context.Background()

	// eve types the marker: not the status comment, and a refusal.
	gh.AddComment(n, "eve", StatusMarker+"\n- state: **merged**")
	require.NoError(t, src.Poll(ctx))
	require.Len(t, b.ledger(t, id, func(e task.Event) bool { return e.Reason == task.ReasonForgeNotAllowed }), 1)
	mine := 0
	cs, err := f.Comments(ctx, n, time.Time{})
	require.NoError(t, err)
	for _, c := range cs {
		if strings.Contains(c.Body, StatusMarker) && c.Author == "team" {
			mine++
			require.Contains(t, c.Body, "state: **awaiting-review**")
		}
	}
	require.Equal(t, 1, mine, "the source posted its own status comment")

	_, err = b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: id, Author: "ana"})
	require.NoError(t, err, b.dump())
	b.barrier(t)
	pd, err := ReadPull(ctx, b.st, id)
	require.NoError(t, err)
	require.NotNil(t, pd)
	gh.AddReviewComment(pd.Number, "alice", "calc.go", 5, "keep Add pure\x1b[31m")
	gh.AddReviewComment(pd.Number, "eve", "calc.go", 6, "eve-line-note")
	for range 3 {
		require.NoError(t, src.Poll(ctx))
	}
	again := NewSource(b.c, cfg) // an engine started again reads them anew
	again.track(n, id, false)
	require.NoError(t, again.Poll(ctx))
	ds, err := b.st.DecisionList(ctx, id)
	require.NoError(t, err)
	require.Len(t, ds, 1, "one decision per line comment")
	require.NotNil(t, ds[0].Anchor)
	require.Equal(t, "calc.go", ds[0].Anchor.File)
	require.Equal(t, 5, ds[0].Anchor.Line)
	require.Equal(t, "Review comment on calc.go:5: keep Add pure", ds[0].Text)
	require.Equal(t, "alice (forge)", ds[0].Author)
	refused := b.ledger(t, id, func(e task.Event) bool { return e.Reason == task.ReasonForgeNotAllowed })
	require.Len(t, refused, 2, "eve's issue comment and her line comment")
	require.Contains(t, refused[1].Text, "eve-line-note")

	gh.AddReview(pd.Number, "bob", "CHANGES_REQUESTED")
	b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskRequeued))
	b.waitRecord(t, 90*time.Second, "the next brief", func() bool { return len(b.inputsOf(t, agent.InputBrief)) == 2 })
	brief := b.inputsOf(t, agent.InputBrief)[1].Text
	require.Contains(t, brief, "calc.go:5")
	require.Contains(t, brief, "keep Add pure")
	require.NotContains(t, brief, "eve-line-note")
}
