package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestADecisionItsEngineDiedBeforeTypingIsTypedOnTakeUp: an engine records
// a decision's delivery to its live session, then dies before the text
// leaves its queue (here: the rows are written while it is stopped with its
// agents kept, which leaves the store exactly so). The next engine takes the
// session up, learns from its host that the decision was never begun, and
// types it: the agent receives it once, and the task goes on to green.
func TestADecisionItsEngineDiedBeforeTypingIsTypedOnTakeUp(t *testing.T) {
	t.Parallel()
	k := keptAgent(t)
	root, script, record, id := k.root, k.script, k.record, k.id
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// What the dead engine committed just before it died: the decision
	// and its delivery to the live session, never typed.
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	now := time.Now().UTC()
	d := store.Decision{ID: task.NewULID(now), TaskID: id, Text: "keep the signatures", Author: "test", At: now}
	require.NoError(t, st.DecisionInsert(ctx, d))
	ok, err := st.DeliveryInsert(ctx, store.Delivery{DecisionID: d.ID, SessionID: k.session, At: now})
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, st.Close())

	startChild(t, root, script)
	cl2 := dialRoot(t, root)
	ch2, unsub2 := cl2.Subscribe()
	defer unsub2()
	waitEvent(t, ch2, kindIs(task.EvTaskAwaiting))
	evs := ledger(t, cl2, id)
	require.Equal(t, 1, countKind(evs, task.EvSessionAdopted), "%v", evs)
	require.Equal(t, 1, countKind(evs, task.EvSessionLaunched), "the agent was relaunched")
	typed := 0
	for _, e := range evs {
		if e.Kind == task.EvDecisionDelivered && strings.Contains(e.Text, "died before typing it") {
			typed++
		}
	}
	require.Equal(t, 1, typed, "%v", evs)
	ins, err := agent.ReadInputLog(record)
	require.NoError(t, err)
	n := 0
	for _, in := range ins {
		if in.Kind == agent.InputDecision {
			n++
			require.Contains(t, in.Text, "keep the signatures")
		}
	}
	require.Equal(t, 1, n, "the agent received the decision once: %+v", ins)
}
