package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var eventCases = []testCase{
	{"EventAppendRoundTrip", testEventRoundTrip},
	{"EventSeqStrictlyIncreasing", testEventSeq},
	{"EventListFilters", testEventListFilters},
	{"EventWithoutIDGetsOne", testEventWithoutID},
	{"EventAppendNothing", testEventAppendNothing},
	{"EventLastSeq", testEventLastSeq},
	{"EventSeqs", testEventSeqs},
}

func testEventRoundTrip(t *testing.T, b *bundle) {
	full := b.event("t1", task.EvRefusal)
	bare := task.Event{ID: "01BARE", TaskID: "t1", Kind: task.EvUsage, Text: "no data", At: b.now}
	require.NoError(t, b.st.EventAppend(b.ctx, full, bare))
	b.requireEvents(t, "t1", full, bare)
}

func testEventSeq(t *testing.T, b *bundle) {
	// One event per call, as the coordinator writes, then a batch.
	for range 5 {
		require.NoError(t, b.st.EventAppend(b.ctx, b.event("t1", task.EvLeaseRenewed)))
	}
	batch := []task.Event{b.event("t2", task.EvUsage), b.event("t1", task.EvUsage), b.event("t2", task.EvUsage)}
	require.NoError(t, b.st.EventAppend(b.ctx, batch...))

	all, err := b.st.EventList(b.ctx, store.EventListParams{})
	require.NoError(t, err)
	require.Len(t, all, 8)
	for i := 1; i < len(all); i++ {
		require.Greater(t, all[i].Seq, all[i-1].Seq, "seq must grow strictly in ledger order")
	}
	// A batch keeps its order.
	require.Equal(t, batch[0].ID, all[5].ID)
	require.Equal(t, batch[1].ID, all[6].ID)
	require.Equal(t, batch[2].ID, all[7].ID)
}

func testEventListFilters(t *testing.T, b *bundle) {
	var t1 []task.Event
	for i := range 6 {
		id := task.ID("t1")
		if i%2 == 1 {
			id = "t2"
		}
		ev := b.event(id, task.EvUsage)
		require.NoError(t, b.st.EventAppend(b.ctx, ev))
		if id == "t1" {
			t1 = append(t1, ev)
		}
	}
	all, err := b.st.EventList(b.ctx, store.EventListParams{})
	require.NoError(t, err)
	require.Len(t, all, 6)

	only, err := b.st.EventList(b.ctx, store.EventListParams{TaskID: "t1"})
	require.NoError(t, err)
	require.Len(t, only, 3)
	for i, e := range only {
		require.Equal(t, t1[i].ID, e.ID)
	}

	after, err := b.st.EventList(b.ctx, store.EventListParams{AfterSeq: all[2].Seq})
	require.NoError(t, err)
	require.Equal(t, all[3:], after, "AfterSeq is exclusive")

	limited, err := b.st.EventList(b.ctx, store.EventListParams{AfterSeq: all[0].Seq, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, all[1:3], limited, "Limit keeps the oldest")

	combined, err := b.st.EventList(b.ctx, store.EventListParams{TaskID: "t1", AfterSeq: only[0].Seq, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, only[1:2], combined)

	past, err := b.st.EventList(b.ctx, store.EventListParams{AfterSeq: all[5].Seq})
	require.NoError(t, err)
	require.Empty(t, past)
}

func testEventWithoutID(t *testing.T, b *bundle) {
	ev := b.event("t1", task.EvUsage)
	ev.ID = ""
	require.NoError(t, b.st.EventAppend(b.ctx, ev, ev))
	got := b.events(t, "t1")
	require.Len(t, got, 2)
	require.NotEmpty(t, got[0].ID)
	require.NotEqual(t, got[0].ID, got[1].ID)
}

func testEventAppendNothing(t *testing.T, b *bundle) {
	require.NoError(t, b.st.EventAppend(b.ctx))
	all, err := b.st.EventList(b.ctx, store.EventListParams{})
	require.NoError(t, err)
	require.Empty(t, all)
}

// isConflictOrStale reports whether a guarded write was refused for either
// reason a driver may give when a token does not match.
func isConflictOrStale(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrStaleToken)
}

func testEventLastSeq(t *testing.T, b *bundle) {
	seq, err := b.st.EventLastSeq(b.ctx)
	require.NoError(t, err)
	require.Zero(t, seq, "an empty ledger")
	require.NoError(t, b.st.EventAppend(b.ctx, b.event("t1", task.EvUsage), b.event("t2", task.EvUsage)))
	all, err := b.st.EventList(b.ctx, store.EventListParams{})
	require.NoError(t, err)
	seq, err = b.st.EventLastSeq(b.ctx)
	require.NoError(t, err)
	require.Equal(t, all[len(all)-1].Seq, seq)
}

func testEventSeqs(t *testing.T, b *bundle) {
	got, err := b.st.EventSeqs(b.ctx, nil)
	require.NoError(t, err)
	require.Empty(t, got)
	// More ids than one statement of SQLite binds, most of them absent.
	var evs []task.Event
	for i := range 3 {
		ev := b.event("t1", task.EvUsage)
		ev.ID = fmt.Sprintf("01SEQ%d", i)
		evs = append(evs, ev)
	}
	require.NoError(t, b.st.EventAppend(b.ctx, evs...))
	all, err := b.st.EventList(b.ctx, store.EventListParams{})
	require.NoError(t, err)
	ids := []string{"01SEQ2"}
	for i := range 1200 {
		ids = append(ids, fmt.Sprintf("01ABSENT%d", i))
	}
	ids = append(ids, "01SEQ0", "01SEQ1")
	got, err = b.st.EventSeqs(b.ctx, ids)
	require.NoError(t, err)
	want := map[string]int64{}
	for _, e := range all {
		want[e.ID] = e.Seq
	}
	require.Equal(t, want, got, "each id in the ledger with its seq, and no other")
}
