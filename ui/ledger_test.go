package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// countingStore counts the reads Detail makes: calls and rows.
type countingStore struct {
	store.Store
	calls, rows atomic.Int64
}

func (s *countingStore) TaskGet(ctx context.Context, id task.ID) (task.Task, error) {
	s.calls.Add(1)
	s.rows.Add(1)
	return s.Store.TaskGet(ctx, id)
}

func (s *countingStore) EventList(ctx context.Context, p store.EventListParams) ([]task.Event, error) {
	evs, err := s.Store.EventList(ctx, p)
	s.calls.Add(1)
	s.rows.Add(int64(len(evs)))
	return evs, err
}

func (s *countingStore) SessionList(ctx context.Context, id task.ID) ([]store.Session, error) {
	ss, err := s.Store.SessionList(ctx, id)
	s.calls.Add(1)
	s.rows.Add(int64(len(ss)))
	return ss, err
}

func (s *countingStore) VerdictList(ctx context.Context, id task.ID) ([]store.VerdictRecord, error) {
	vs, err := s.Store.VerdictList(ctx, id)
	s.calls.Add(1)
	s.rows.Add(int64(len(vs)))
	return vs, err
}

func (s *countingStore) DecisionList(ctx context.Context, id task.ID) ([]store.Decision, error) {
	ds, err := s.Store.DecisionList(ctx, id)
	s.calls.Add(1)
	s.rows.Add(int64(len(ds)))
	return ds, err
}

// ledgerEngine is the stub engine with Detail read from a real store, as
// the coordinator reads it.
type ledgerEngine struct {
	*stubEngine
	st *countingStore
}

func (e *ledgerEngine) Detail(ctx context.Context, id task.ID, q coord.DetailQuery) (coord.Detail, error) {
	return coord.ReadDetail(ctx, e.st, id, q)
}

// 10,000 events through one selected task: the console's work per event
// (store calls and rows read) is the same for the last 1,000 as for the
// first 1,000, where rereading the ledger would make it grow with the run.
// Then, with the Events tab open, each new event renders one entry and the
// tab holds at most shownEvents of them.
func TestLedgerFollowedAtFlatCostPerEvent(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	tk := task.Task{ID: task.NewID(testNow), Title: "long run", Goal: "g", Verify: "true",
		Pipeline: task.Pipeline{task.PhaseImplement}, State: task.StateRunning, Phase: task.PhaseImplement,
		CreatedAt: testNow, UpdatedAt: testNow}
	require.NoError(t, st.TaskInsert(ctx, tk))
	require.NoError(t, st.SessionInsert(ctx, store.Session{ID: task.NewULID(testNow), TaskID: tk.ID, Phase: tk.Phase,
		Attempt: 1, Harness: "claude", Model: "opus", Status: store.SessionConfirmed, Brief: "## Goal\ng\n", StartedAt: testNow}))

	cs := &countingStore{Store: st}
	e := newStubEngine(testNow)
	e.snap.Tasks = []coord.TaskView{{Task: tk, SessionID: "s"}}
	eng := &ledgerEngine{stubEngine: e, st: cs}
	m := New(eng, Options{NoAnim: true, Now: func() time.Time { return testNow }})
	m.tick = nil
	b := &bundle{t: t, eng: e, m: m}
	b.run(m.Init())
	b.size(120, 40)

	const n, window, onTab = 10000, 1000, 100
	type work struct{ calls, rows, rendered int64 }
	per := make([]work, n+onTab)
	for i := range n + onTab {
		if i == n {
			b.press("4") // the Events tab renders the ledger from here on
		}
		at := testNow.Add(time.Duration(i) * time.Second)
		ev := task.Event{ID: task.NewULID(at), TaskID: tk.ID, Kind: task.EvLeaseRenewed, Text: fmt.Sprintf("renewed %d", i), At: at}
		switch i % 50 {
		case 10:
			ev.Kind = task.EvUsage
			data, _ := json.Marshal(store.UsageData{SessionID: "s", Phase: tk.Phase, Totals: usage.Totals{Models: map[string]usage.ModelTotals{"opus": {Tokens: usage.Tokens{Input: 10}}}}})
			ev.Data = data
		case 20:
			ev.Kind = task.EvVerifyFinished // may change the verdicts: records reread
		}
		require.NoError(t, st.EventAppend(ctx, ev))
		c0, r0 := cs.calls.Load(), cs.rows.Load()
		l0 := m.tabs.ledgers[tk.ID].rendered
		b.send(eventMsg{ev: ev})
		per[i] = work{cs.calls.Load() - c0, cs.rows.Load() - r0, int64(m.tabs.ledgers[tk.ID].rendered - l0)}
	}
	sum := func(ws []work) (w work) {
		for _, x := range ws {
			w.calls, w.rows, w.rendered = w.calls+x.calls, w.rows+x.rows, w.rendered+x.rendered
		}
		return w
	}
	first, last := sum(per[1:window+1]), sum(per[n-window:n]) // the first event reads the ledger whole
	t.Logf("work per %d events, first: %+v, last: %+v", window, first, last)
	require.Equal(t, first, last, "the console's work per event does not grow with the ledger")
	tab := sum(per[n+1:])
	require.Equal(t, int64(onTab-1), tab.rendered, "on the Events tab each event is rendered once")
	require.Equal(t, sum(per[n-onTab+1:n]).calls, tab.calls, "and read the same way")
	require.Len(t, m.tabs.ledgers[tk.ID].d.Events, n+onTab, "every event is followed")
	require.LessOrEqual(t, len(m.tabs.ledgers[tk.ID].lines), shownEvents)
	require.Contains(t, m.tabs.eventsContent(116), fmt.Sprintf("… %d earlier events are in the ledger", n+onTab-shownEvents))
}
