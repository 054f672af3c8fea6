package coord

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// blipStore is a network store whose next fenced append of one kind of
// event fails as a restarting PostgreSQL's call does, once; every other
// call answers.
type blipStore struct {
	store.Store
	kind task.Kind
	fail atomic.Bool
}

func (s *blipStore) EventAppendFenced(ctx context.Context, token int64, evs ...task.Event) error {
	if len(evs) > 0 && evs[0].Kind == s.kind && s.fail.CompareAndSwap(true, false) {
		return errNoServer
	}
	return s.Store.EventAppendFenced(ctx, token, evs...)
}

// A fenced append that met an outage is held; the task's move that comes
// next, and finds the store back, waits behind it: written first, the move
// released the lease the held append was fenced by, which the store then
// refused as stale, and the record was lost (the fault run: a remote
// branch's tip pushed with no branch.pushed event in the ledger).
func TestFakeAMoveWaitsBehindTheTasksHeldAppends(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bs := &blipStore{kind: task.EvBranchPushed}
		bs.fail.Store(true)
		b := setupFakeWrapped(t, func(cfg *config.Config) { cfg.Fleet.Remote = "origin" },
			func(st store.Store) store.Store { bs.Store = st; return bs })
		b.bareOrigin(t)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		a.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
		require.False(t, bs.fail.Load(), "the push's record never met the blip")
		pushed := b.ledger(t, id, kindIs(task.EvBranchPushed))
		require.Len(t, pushed, 1, "the push's record was lost:\n%s", b.dump())
		evs, err := b.st.EventList(context.Background(), store.EventListParams{TaskID: id})
		require.NoError(t, err)
		var order []task.Kind
		for _, ev := range evs {
			if ev.Kind == task.EvBranchPushed || ev.Kind == task.EvTaskAwaiting {
				order = append(order, ev.Kind)
			}
		}
		require.Equal(t, []task.Kind{task.EvBranchPushed, task.EvTaskAwaiting}, order, "the ledger's order")
	})
}
