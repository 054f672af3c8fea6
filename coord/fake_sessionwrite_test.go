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

// sessionDownStore is downStore whose session rows cannot be read or
// written while it is down either.
type sessionDownStore struct{ downStore }

func (s *sessionDownStore) SessionGet(ctx context.Context, id string) (store.Session, error) {
	if s.down.Load() {
		return store.Session{}, errNoServer
	}
	return s.Store.SessionGet(ctx, id)
}

func (s *sessionDownStore) SessionUpdate(ctx context.Context, sess store.Session, evs ...task.Event) error {
	if s.down.Load() {
		return errNoServer
	}
	return s.Store.SessionUpdate(ctx, sess, evs...)
}

// The fault run's overlapping sessions: a session that ended while the
// database restarted had its end lost (the row stayed live until another
// engine's rescue marked it, seconds later) and the refusal called the
// connection error an illegal transition. The end is written once the
// store answers, with the time the session ended, and no refusal says the
// task made an illegal move.
func TestFakeSessionEndDuringAnOutageIsWrittenWhenTheStoreIsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ds := &sessionDownStore{}
		b := setupFakeWrapped(t, nil, func(st store.Store) store.Store { ds.Store = st; return ds })
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, launched := b.launch(t)

		ds.down.Store(true)
		exited := time.Now()
		a.Exit(1, nil)
		b.waitEvent(t, refusalOf(task.ReasonStoreFailed))
		time.Sleep(10 * time.Second)
		b.barrier(t)
		ds.down.Store(false)
		b.waitEvent(t, kindIs(task.EvStoreRecovered))
		b.barrier(t)

		s, err := b.st.SessionGet(context.Background(), launched.SessionID)
		require.NoError(t, err)
		require.False(t, s.EndedAt.IsZero(), "the session's end was lost in the outage")
		require.True(t, exited.Equal(s.EndedAt), "the session ended when it exited (%s), not when the store came back (%s)", exited, s.EndedAt)
		require.Equal(t, store.SessionExited, s.Status)
		for _, ev := range b.events {
			require.NotEqual(t, task.ReasonIllegalTransition, ev.Reason, "a connection error is no illegal move: %s", ev.Text)
		}
	})
}
