package coord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A comment on a line of the diff, then request changes: the task goes
// back to implement with a fresh attempt budget, the next brief holds the
// comment with its file and line, and the next attempt ends green again.
// A resolved comment leaves later briefs.
func TestRequestChangesBringsTheCommentIntoTheNextBrief(t *testing.T) {
	t.Parallel()
	b := setup(t, fixedScript(), nil)
	id := greenTask(t, b)
	ctx := context.Background()

	_, err := b.c.Do(ctx, Command{Kind: CmdRequestChanges, TaskID: id})
	require.NoError(t, err, "no comments is allowed: the operator may say why in a plain correction")
	require.Eventually(t, func() bool { return b.taskView(t, id).Task.State != task.StateAwaitingReview }, 30*time.Second, 10*time.Millisecond)
	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())

	anchor := &store.Anchor{File: "calc.go", Line: 5, LineText: "\treturn a + b", Hunk: "-\treturn a - b\n+\treturn a + b\n"}
	res, err := b.c.Do(ctx, Command{Kind: CmdCorrect, TaskID: id, Text: "name the constant", Author: "ana", Anchor: anchor})
	require.NoError(t, err)
	require.Equal(t, "queued for the next brief", res.Message)

	res, err = b.c.Do(ctx, Command{Kind: CmdRequestChanges, TaskID: id, Author: "ana"})
	require.NoError(t, err)
	require.Equal(t, "back to implement with 1 open comment", res.Message)
	tv := b.taskView(t, id).Task
	require.Equal(t, task.PhaseImplement, tv.Phase)
	require.LessOrEqual(t, tv.Attempt, 1, "no attempt charged: the phase starts again at its first attempt")

	last = b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	var brief string
	for n := 1; n <= 3 && brief == ""; n++ {
		for _, bf := range []string{b.recordedBrief(task.PhaseImplement, 1, n)} {
			if strings.Contains(bf, "name the constant") {
				brief = bf
			}
		}
	}
	require.NotEmpty(t, brief, "a brief of the new implement attempt holds the comment")
	decisions := brief[strings.Index(brief, task.HeadingDecisions):]
	decisions = decisions[:strings.Index(decisions[3:], "\n## ")+3]
	require.Contains(t, decisions, "Review comment on calc.go:5 (`return a + b`): name the constant")

	ds, err := b.st.DecisionList(ctx, id)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	_, err = b.c.Do(ctx, Command{Kind: CmdResolve, TaskID: id, Text: ds[0].ID})
	require.NoError(t, err)
	ds, err = b.st.DecisionList(ctx, id)
	require.NoError(t, err)
	require.False(t, ds[0].ResolvedAt.IsZero())
	require.Empty(t, openDecisions(ds), "a resolved comment leaves later briefs")
}
