package coord

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// downStore is a network store that can be made not to answer: while down,
// appending events and listing engines fail as a restarting PostgreSQL's
// calls do. It has no Path, so the coordinator takes it for a network
// store.
type downStore struct {
	store.Store
	down atomic.Bool
}

var errNoServer = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (s *downStore) EventAppend(ctx context.Context, evs ...task.Event) error {
	if s.down.Load() {
		return errNoServer
	}
	return s.Store.EventAppend(ctx, evs...)
}

func (s *downStore) EngineList(ctx context.Context) ([]store.Engine, error) {
	if s.down.Load() {
		return nil, errNoServer
	}
	return s.Store.EngineList(ctx)
}

// A network store's outage pauses placement with PostgreSQL's advice, not
// SQLite's; the event that could not be appended meanwhile is appended
// once, when the store answers again; the outage then clears by itself and
// a task added during it is placed.
func TestFakeStoreOutageIsWeatheredAndPlacementResumes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := &downStore{}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		first := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)

		ds.down.Store(true)
		res, err := b.c.Do(context.Background(), Command{Kind: CmdResubmit, TaskID: first, Author: "ana"})
		require.NoError(t, err)
		require.Equal(t, a.Params().SessionID, res.SessionID)
		fault := b.waitEvent(t, refusalOf(task.ReasonStoreFailed)).Text
		require.Contains(t, fault, "PostgreSQL")
		require.Contains(t, fault, "resumes by itself")
		require.Contains(t, fault, "pg_isready")
		require.NotContains(t, fault, "df -h", "a database server's outage is not a disk's")
		require.Contains(t, fault, b.c.Snapshot().StoreFault)

		// A task added during the outage waits: placement has paused.
		second := b.add(t, task.Pipeline{task.PhaseImplement})
		time.Sleep(time.Minute)
		b.barrier(t)
		require.Equal(t, task.StateQueued, b.taskView(t, second).Task.State, "placed while the store did not answer")

		ds.down.Store(false)
		b.waitEvent(t, kindIs(task.EvStoreRecovered))
		b.launch(t) // the second task, placed by itself
		require.Empty(t, b.c.Snapshot().StoreFault)

		evs, err := b.st.EventList(context.Background(), store.EventListParams{})
		require.NoError(t, err)
		resubmitted := 0
		for _, ev := range evs {
			if ev.Kind == task.EvResubmitted && ev.TaskID == first {
				resubmitted++
			}
		}
		require.Equal(t, 1, resubmitted, "the event held during the outage is in the ledger once")
	})
}

// For a TTL after the store answers again, no other engine's task is
// taken over: every engine's heartbeats were blocked by the same outage.
func TestTakeoverWaitsATTLAfterAnOutage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := &Coordinator{sw: storeWatch{ttl: 30 * time.Second}}
	require.False(t, c.sw.takeoverPaused(now), "no outage seen: takeovers as usual")
	c.sw.outage = true
	require.True(t, c.sw.takeoverPaused(now))
	c.sw.outage, c.sw.back = false, now
	require.True(t, c.sw.takeoverPaused(now.Add(29*time.Second)))
	require.False(t, c.sw.takeoverPaused(now.Add(30*time.Second)))
}
