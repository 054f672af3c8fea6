package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// EventSeqs answers for the events this Store appended what the ledger
// holds; an event of a write that rolled back is not answered from that
// write, and an event appended again later gets its new seq.
func TestEventSeqsOfOwnAppendsMatchTheLedger(t *testing.T) {
	t.Parallel()
	st, err := Open(filepath.Join(t.TempDir(), "orchestra.db"))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	tk := sampleTask("seqs")
	added := task.Event{ID: task.NewULID(tk.CreatedAt), TaskID: tk.ID, Kind: task.EvTaskAdded, At: tk.CreatedAt}
	require.NoError(t, st.TaskInsert(ctx, tk, added))

	// The decision's task does not exist: the write fails after its event
	// was appended, and rolls back.
	lost := task.Event{ID: task.NewULID(tk.CreatedAt), TaskID: "nope", Kind: task.EvDecisionRecorded, At: tk.CreatedAt}
	require.Error(t, st.DecisionInsert(ctx, store.Decision{ID: task.NewULID(tk.CreatedAt), TaskID: "nope", Text: "x", Author: "ops", At: tk.CreatedAt}, lost))
	st.seqs.mu.Lock()
	_, kept := st.seqs.m[lost.ID]
	st.seqs.mu.Unlock()
	require.False(t, kept, "the rolled-back append's seq was kept")
	other := task.Event{ID: task.NewULID(tk.CreatedAt), TaskID: tk.ID, Kind: task.EvDecisionRecorded, At: tk.CreatedAt}
	require.NoError(t, st.EventAppend(ctx, other, lost))

	ids := []string{added.ID, other.ID, lost.ID}
	ledger, err := st.Ops.EventSeqs(ctx, ids)
	require.NoError(t, err)
	require.Len(t, ledger, 3)
	st.seqs.mu.Lock()
	n := len(st.seqs.m)
	st.seqs.mu.Unlock()
	require.Equal(t, 3, n, "the committed appends' seqs were not kept")
	got, err := st.EventSeqs(ctx, ids)
	require.NoError(t, err)
	require.Equal(t, ledger, got)
	// Asked again, they come from the ledger.
	again, err := st.EventSeqs(ctx, ids)
	require.NoError(t, err)
	require.Equal(t, ledger, again)
}
