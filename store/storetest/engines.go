package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
)

var engineCases = []testCase{
	{"EngineHeartbeatRoundTrip", testEngineHeartbeat},
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
	require.Equal(t, []store.Engine{c, a}, list, "most recent heartbeat first")

	// A later beat rewrites the row: new load, new time; a clean stop is
	// recorded the same way.
	a.Busy, a.HeartbeatAt, a.StoppedAt = 3, b.at(5*time.Second), b.at(5*time.Second)
	require.NoError(t, b.st.EngineHeartbeat(b.ctx, a))
	list, err = b.st.EngineList(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Engine{a, c}, list)
}
