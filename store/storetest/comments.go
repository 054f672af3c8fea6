package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// testComments: a review comment is a decision with an anchor, which reads
// back as written; resolving it records when, with its events, and a
// decision of another task or none at all is not found.
func testComments(t *testing.T, b *bundle) {
	tk, other := b.insertTask(t), b.insertTask(t)
	plain := b.newDecision(tk.ID, time.Second)
	c := b.newDecision(tk.ID, 2*time.Second)
	c.Text = "Review comment on calc.go:5: name the constant"
	c.Anchor = &store.Anchor{File: "calc.go", Line: 5, LineText: "\treturn a + b", Hunk: "-\treturn a - b\n+\treturn a + b\n"}
	old := b.newDecision(tk.ID, 3*time.Second)
	old.Anchor = &store.Anchor{File: "calc.go", Line: 4, Old: true, LineText: "x", Hunk: "-x\n"}
	for _, d := range []store.Decision{plain, c, old} {
		require.NoError(t, b.st.DecisionInsert(b.ctx, d))
	}
	got, err := b.st.DecisionList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Decision{plain, c, old}, got)

	ev := b.event(tk.ID, task.EvDecisionRecorded)
	at := b.at(4 * time.Second)
	require.NoError(t, b.st.DecisionResolve(b.ctx, tk.ID, c.ID, at, ev))
	got, err = b.st.DecisionList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.True(t, got[1].ResolvedAt.Equal(at), "resolved at %v, read %v", at, got[1].ResolvedAt)
	require.True(t, got[0].ResolvedAt.IsZero(), "the others stay open")
	require.True(t, got[2].ResolvedAt.IsZero())
	b.requireEvents(t, tk.ID, ev)

	require.ErrorIs(t, b.st.DecisionResolve(b.ctx, other.ID, c.ID, at), store.ErrNotFound, "another task's decision")
	require.ErrorIs(t, b.st.DecisionResolve(b.ctx, tk.ID, "nope", at), store.ErrNotFound)
}
