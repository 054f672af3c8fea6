package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
)

var engineCases = []testCase{
	{"EngineHeartbeatRoundTrip", testEngineHeartbeat},
	{"EngineHeartbeatOnTheStoresClock", testEngineHeartbeatClock},
}

// byStoreClock drops what a store with its own clock stamps (StoreClock):
// the times it wrote and the age it read, which the writer does not pass.
func byStoreClock(es []store.Engine, writer []store.Engine) []store.Engine {
	out := append([]store.Engine(nil), es...)
	for i := range out {
		if !out[i].StoreClock {
			continue
		}
		for _, w := range writer {
			if w.ID == out[i].ID {
				if !out[i].StoppedAt.IsZero() {
					out[i].StoppedAt = w.StoppedAt
				}
				out[i].HeartbeatAt, out[i].StoreClock, out[i].BeatAge = w.HeartbeatAt, false, 0
			}
		}
	}
	return out
}

// A store that keeps its own clock stamps the heartbeat with it, whatever
// the writer's clock says: a machine five minutes behind beats as fresh as
// any other, and the age read back is by the store's clock too.
func testEngineHeartbeatClock(t *testing.T, b *bundle) {
	skewed := store.Engine{ID: "engine:host-s:300:i3", Host: "host-s", Pid: 300, Version: "v1", Repo: "/src/calc",
		Slots: 1, StartedAt: b.now.Add(-5 * time.Minute), HeartbeatAt: b.now.Add(-5 * time.Minute)}
	require.NoError(t, b.st.EngineHeartbeat(b.ctx, skewed))
	list, err := b.st.EngineList(b.ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	if !list[0].StoreClock {
		t.Skip("this store keeps no clock of its own: one machine, the writer's clock")
	}
	require.Less(t, list[0].BeatAge, time.Minute, "judged by the writer's clock, not the store's")
	require.GreaterOrEqual(t, list[0].BeatAge, time.Duration(0))
	require.Less(t, list[0].HeartbeatAge(b.now.Add(time.Hour)), time.Minute, "the reader's clock plays no part")
}

func testEngineHeartbeat(t *testing.T, b *bundle) {
	list, err := b.st.EngineList(b.ctx)
	require.NoError(t, err)
	require.Empty(t, list)

	a := store.Engine{ID: "engine:host-a:100:i1", Host: "host-a", Pid: 100, Version: "v1", Repo: "/src/calc",
		SSH: "ops@build-a.internal", Bin: "/usr/local/bin/orchestra-tui",
		Slots: 4, Busy: 1, StartedAt: b.now, HeartbeatAt: b.now}
	c := store.Engine{ID: "engine:host-b:200:i2", Host: "host-b", Pid: 200, Version: "v1", Repo: "/work/calc",
		Slots: 2, StartedAt: b.now, HeartbeatAt: b.at(time.Second)}
	require.NoError(t, b.st.EngineHeartbeat(b.ctx, a))
	require.NoError(t, b.st.EngineHeartbeat(b.ctx, c))
	list, err = b.st.EngineList(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Engine{c, a}, byStoreClock(list, []store.Engine{a, c}), "most recent heartbeat first")

	// A later beat rewrites the row: new load, new time; a clean stop is
	// recorded the same way.
	a.Busy, a.HeartbeatAt, a.StoppedAt = 3, b.at(5*time.Second), b.at(5*time.Second)
	require.NoError(t, b.st.EngineHeartbeat(b.ctx, a))
	list, err = b.st.EngineList(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Engine{a, c}, byStoreClock(list, []store.Engine{a, c}))
	require.False(t, list[0].StoppedAt.IsZero(), "the clean stop is recorded")
	require.False(t, list[0].Kept)

	// A stop that leaves the agents for the machine's next engine says so;
	// a beat that is no stop never does.
	c.Busy, c.HeartbeatAt, c.StoppedAt, c.Kept = 0, b.at(6*time.Second), b.at(6*time.Second), true
	require.NoError(t, b.st.EngineHeartbeat(b.ctx, c))
	list, err = b.st.EngineList(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Engine{c, a}, byStoreClock(list, []store.Engine{a, c}))
	require.True(t, list[0].Kept, "the stop kept its agents")
	d := store.Engine{ID: "engine:host-d:400:i4", Host: "host-d", Pid: 400, Version: "v1", Repo: "/src/calc",
		Slots: 1, StartedAt: b.now, HeartbeatAt: b.at(7 * time.Second), Kept: true}
	require.NoError(t, b.st.EngineHeartbeat(b.ctx, d))
	list, err = b.st.EngineList(b.ctx)
	require.NoError(t, err)
	require.Equal(t, d.ID, list[0].ID)
	require.False(t, list[0].Kept, "a running engine keeps nothing")
}
