package coord

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A session whose task another engine requeued, with no change notice
// reaching this engine (a notice lost while its listener reconnected), is
// stopped at the next tick's look at the store's leases, not at its next
// fenced write: the fault run saw an agent work on for three seconds after
// its task had been requeued, and here the next such write (a renewal) is
// fifteen minutes away.
func TestFakeASessionWhoseLeaseIsGoneIsStoppedAtTheNextTick(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupShared(t)
		ctx := context.Background()
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		b.c.NoteBeat(time.Now(), nil)
		b.barrier(t)
		l, err := b.st.LeaseGet(ctx, id)
		require.NoError(t, err)
		tk, err := b.st.TaskGet(ctx, id)
		require.NoError(t, err)
		// Another engine's requeue, written straight to the store: the
		// sharedStore has no listener, so no notice reaches the loop.
		requeued := time.Now()
		_, err = b.st.TaskTransition(ctx, store.Orphan(id, tk.State, l.Token, requeued))
		require.NoError(t, err)

		time.Sleep(2 * b.cfg.Lease.Tick.Duration)
		b.c.NoteBeat(time.Now(), nil)
		b.barrier(t)
		select {
		case <-a.Done():
		default:
			t.Fatalf("the agent works on %s after its task was requeued:\n%s", time.Since(requeued), b.dump())
		}
		require.NotEmpty(t, a.Stops(), "the agent was not stopped by its engine")
	})
}
