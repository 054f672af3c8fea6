package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// An engine that stopped with --keep-agents holds its leases for a TTL
// after its stop, for every engine but its own clone's next one: a peer
// on another machine, and one on this machine serving another clone, wait;
// the next engine on the same clone takes the agents up at once (its
// predecessor's process is gone); once the stop is older than the TTL,
// everyone may take the tasks over, and the event says why. A plain stop
// holds nothing.
func TestAKeptStopHoldsItsLeasesForTheNextEngineOnly(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const ttl = 30 * time.Second
	const holder = "engine:999999999:1:gone" // no such process
	stop := func(kept bool, ago time.Duration) map[string]store.Engine {
		at := now.Add(-ago)
		return engineIndex([]store.Engine{{ID: holder, Host: "m1", Repo: "/src/calc", HeartbeatAt: at, StoppedAt: at, Kept: kept}})
	}
	cases := []struct {
		what       string
		kept       bool
		ago        time.Duration
		host, root string
		live       bool
	}{
		{"a peer on another machine, within the TTL", true, 10 * time.Second, "m2", "/src/calc", true},
		{"another clone on the same machine, within the TTL", true, 10 * time.Second, "m1", "/src/other", true},
		{"the same clone's next engine", true, 10 * time.Second, "m1", "/src/calc", false},
		{"a peer, past the TTL", true, 31 * time.Second, "m2", "/src/calc", false},
		{"another clone on the same machine, past the TTL", true, 31 * time.Second, "m1", "/src/other", false},
		{"a peer, after a plain stop", false, time.Second, "m2", "/src/calc", false},
	}
	for _, c := range cases {
		require.Equal(t, c.live, holderLive(holder, stop(c.kept, c.ago), c.host, c.root, now, ttl), c.what)
	}
	why := holderGone(holder, stop(true, 31*time.Second), "m2", "/src/calc", now, ttl)
	require.Contains(t, why, "keeping its agents for its next engine, which did not take them up within the TTL (30s)")
}
