package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const benchEvents = 10_000

func benchStore(b *testing.B) *Store {
	b.Helper()
	st, err := Open(filepath.Join(b.TempDir(), "orchestra.db"))
	require.NoError(b, err)
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// benchEventSet builds n events shaped like the coordinator's: spread over
// ten tasks, a sentence of text and a small JSON payload.
func benchEventSet(n int) []task.Event {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]task.Event, n)
	for i := range out {
		out[i] = task.Event{
			ID:        task.NewULID(at),
			TaskID:    task.ID(fmt.Sprintf("task-%d", i%10)),
			SessionID: "01SESSION",
			Kind:      task.EvLeaseRenewed,
			Text:      "The lease was renewed: the worktree changed since the last sample.",
			Data:      json.RawMessage(`{"renewals":3,"deadline":"2026-01-01T00:05:00Z"}`),
			At:        at.Add(time.Duration(i) * time.Millisecond),
		}
	}
	return out
}

// BenchmarkEventAppend10k appends 10,000 events per op, one transaction per
// event as the coordinator writes them, and in batches of 100.
func BenchmarkEventAppend10k(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			st := benchStore(b)
			ctx := context.Background()
			evs := benchEventSet(benchEvents)
			b.ReportAllocs()
			for b.Loop() {
				for i := 0; i < len(evs); i += batch {
					// IDs are unique per row, so give each op fresh ones.
					for j := i; j < i+batch; j++ {
						evs[j].ID = ""
					}
					if err := st.EventAppend(ctx, evs[i:i+batch]...); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchEvents), "ns/event")
		})
	}
}

// BenchmarkEventList reads from a ledger of 10,000 events: one task's 1,000
// events, and a page of 100 of all tasks after a seq, as the UI tails it.
func BenchmarkEventList(b *testing.B) {
	st := benchStore(b)
	ctx := context.Background()
	evs := benchEventSet(benchEvents)
	for i := 0; i < len(evs); i += 1000 {
		require.NoError(b, st.EventAppend(ctx, evs[i:i+1000]...))
	}
	cases := []struct {
		name string
		p    store.EventListParams
		want int
	}{
		{"task=1000", store.EventListParams{TaskID: "task-3"}, 1000},
		{"tail=100", store.EventListParams{AfterSeq: 5000, Limit: 100}, 100},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := st.EventList(ctx, c.p)
				if err != nil || len(got) != c.want {
					b.Fatalf("got %d events, err %v", len(got), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.want), "ns/event")
		})
	}
}

// BenchmarkCorrection is the store's part of a correction typed into a
// live session, as the engine does it: the decision, its delivery and
// their events (one write; two before DecisionDeliver), then the ledger
// positions of both events for the consoles (coord's hub). The engine's
// input path (bench/correct.sh) waits on the writes.
func BenchmarkCorrection(b *testing.B) {
	for _, one := range []bool{true, false} {
		name := "one-write"
		if !one {
			name = "two-writes"
		}
		b.Run(name, func(b *testing.B) {
			st := benchStore(b)
			ctx := context.Background()
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			tk := task.Task{ID: "01TASKBENCH", Title: "bench", Goal: "sit", Verify: "true", Repo: "/repo",
				Pipeline: task.Pipeline{task.PhaseImplement}, Harness: "scripted", State: task.StateRunning,
				Phase: task.PhaseImplement, CreatedAt: at, UpdatedAt: at}
			require.NoError(b, st.TaskInsert(ctx, tk))
			ss := store.Session{ID: "01SESSIONBENCH", TaskID: tk.ID, Phase: task.PhaseImplement, Attempt: 1,
				Harness: "scripted", Token: 1, Holder: "slot-1@host", Status: store.SessionConfirmed, StartedAt: at}
			require.NoError(b, st.SessionInsert(ctx, ss))
			b.ReportAllocs()
			for b.Loop() {
				d := store.Decision{ID: task.NewULID(at), TaskID: tk.ID, Text: "use the v2 API", Author: "ops", At: at}
				rec := task.Event{ID: task.NewULID(at), TaskID: tk.ID, Kind: task.EvDecisionRecorded, Text: "Human decision by ops: use the v2 API", At: at}
				del := task.Event{ID: task.NewULID(at), TaskID: tk.ID, SessionID: ss.ID, Kind: task.EvDecisionDelivered, Text: "Decision delivered.", At: at}
				dl := store.Delivery{DecisionID: d.ID, SessionID: ss.ID, At: at}
				if one {
					require.NoError(b, st.DecisionDeliver(ctx, d, dl, rec, del))
				} else {
					require.NoError(b, st.DecisionInsert(ctx, d, rec))
					ok, err := st.DeliveryInsert(ctx, dl, del)
					require.NoError(b, err)
					require.True(b, ok)
				}
				seqs, err := st.EventSeqs(ctx, []string{rec.ID, del.ID})
				require.NoError(b, err)
				require.Len(b, seqs, 2)
			}
		})
	}
}
