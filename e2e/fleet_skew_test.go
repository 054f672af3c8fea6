package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestFleetSkewedClocksTakeNothingOver runs a fleet of three engines on one
// PostgreSQL store whose machines' clocks disagree by ten minutes: one is
// right, one 5 minutes ahead, one 5 minutes behind (a binary built with the
// orchestra_faults tag shifts its coordinator's clock by
// coord.FaultClockOffsetEnv). With a TTL of one second, an engine that
// judged liveness or lease deadlines by its own clock would take over every
// task of the others at once, or step down and never place; with the
// database's clock deciding, every task ends green on its first session,
// none is taken over, no two sessions of a task overlap, and every engine
// is still beating at the end.
func TestFleetSkewedClocksTakeNothingOver(t *testing.T) {
	parallel(t)
	hosts := []string{"machine-right", "machine-ahead", "machine-behind"}
	f := newFleet(t, hosts, 2, 10)
	f.bin = buildBinary(t, t.TempDir(), "-tags", "orchestra_faults")
	f.engines["machine-ahead"].env = []string{coord.FaultClockOffsetEnv + "=5m"}
	f.engines["machine-behind"].env = []string{coord.FaultClockOffsetEnv + "=-5m"}
	began := time.Now()
	for _, h := range hosts {
		f.start(t, h)
	}
	var ids []task.ID
	for _, h := range hosts {
		ids = append(ids, f.add(t, h, 3)...)
	}
	f.waitStore(t, 4*time.Minute, "every task green", func() bool { return f.allAwaiting(t, ids) })

	sessions := f.checkFinished(t, ids)
	f.noTakeover(t, ids, began)
	ctx := context.Background()
	holders := map[string]int{}
	for id, ss := range sessions {
		require.Len(t, ss, 1, "task %s ran more than one session", id)
		holders[ss[0].Holder]++
		tk, err := f.st.TaskGet(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, tk.Attempt, "task %s was charged %d attempts", id, tk.Attempt)
	}
	for _, h := range hosts {
		e := f.engineOf(t, h)
		require.NotEmpty(t, e.ID, "%s's engine stopped beating\n%s", h, f.logs())
		evs, err := f.st.EventList(ctx, store.EventListParams{})
		require.NoError(t, err)
		for _, ev := range evs {
			require.NotEqual(t, task.ReasonStaleLeaseToken, ev.Reason, "a write was fenced out: %s", ev.Text)
		}
	}
	// The skew is real: each skewed engine's own events carry its clock.
	shift := map[string]time.Duration{}
	for id, ss := range sessions {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
		require.NoError(t, err)
		for _, ev := range evs {
			if ev.SessionID == ss[0].ID {
				shift[ss[0].Holder] = time.Until(ev.At).Round(time.Minute)
			}
		}
	}
	for h, want := range map[string]time.Duration{"machine-ahead": 5 * time.Minute, "machine-behind": -5 * time.Minute} {
		got, ok := shift[f.engineOf(t, h).ID]
		require.True(t, ok, "%s ran no session", h)
		require.Equal(t, want, got, "%s's events carry its shifted clock", h)
	}
	t.Logf("9 tasks green on %d engines with clocks ±5m apart, sessions per engine %v", len(holders), holders)
}
