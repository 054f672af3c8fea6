package ui

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func listIDs(b *bundle) []task.ID {
	var ids []task.ID
	for _, tv := range b.m.tasks.visible() {
		ids = append(ids, tv.Task.ID)
	}
	return ids
}

// A task that would re-sort between two keystrokes keeps its row while the
// operator moves: `j j` typed from memory of the screen lands on the third
// row it showed. Once the operator pauses, the list re-sorts and the cursor
// stays on its task.
func TestRowsHoldTheirOrderWhileTheOperatorMoves(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	for i, id := range []task.ID{"01TAAAAAAA", "01TBBBBBBB", "01TCCCCCCC"} {
		e.snap.Tasks = append(e.snap.Tasks, coord.TaskView{Task: task.Task{ID: id, Title: string(id), State: task.StateCompleted,
			Phase: task.PhaseReview, UpdatedAt: testNow.Add(-time.Duration(i+1) * time.Minute)}})
	}
	b := setupEngine(t, e).size(120, 40)
	require.Equal(t, []task.ID{"01TAAAAAAA", "01TBBBBBBB", "01TCCCCCCC"}, listIDs(b))
	require.Equal(t, task.ID("01TAAAAAAA"), b.m.selID)

	b.press("j")
	// C has news between the two keystrokes: sorted, it would be first.
	s := e.Snapshot()
	s.Tasks[2].Task.UpdatedAt = testNow
	s.Tasks[2].Task.State = task.StateFailed
	b.m.setSnap(s)
	require.Equal(t, []task.ID{"01TAAAAAAA", "01TBBBBBBB", "01TCCCCCCC"}, listIDs(b), "held while the operator moves")
	b.press("j")
	require.Equal(t, task.ID("01TCCCCCCC"), b.m.selID, "the second j lands on the row the screen showed third")

	// A task added meanwhile goes at the end until the hold ends.
	s.Tasks = append(s.Tasks, coord.TaskView{Task: task.Task{ID: "01TDDDDDDD", State: task.StateCompleted, Phase: task.PhaseReview, UpdatedAt: testNow}})
	b.m.setSnap(s)
	require.Equal(t, task.ID("01TDDDDDDD"), listIDs(b)[3])

	stale := holdEndMsg{until: b.m.tasks.holdUntil.Add(-time.Second)}
	b.send(stale)
	require.Equal(t, task.ID("01TDDDDDDD"), listIDs(b)[3], "an earlier move's timer does not end a later hold")

	b.send(holdEndMsg{until: b.m.tasks.holdUntil})
	require.Equal(t, []task.ID{"01TCCCCCCC", "01TDDDDDDD", "01TAAAAAAA", "01TBBBBBBB"}, listIDs(b), "re-sorted once the operator paused")
	require.Equal(t, task.ID("01TCCCCCCC"), b.m.selID, "the cursor stays on its task")
}
