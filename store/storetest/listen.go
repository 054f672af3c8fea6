package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

var listenCases = []testCase{
	{"ListenSignalsAfterCommit", testListenSignals},
	{"ListenCoalescesAndCloses", testListenCoalesces},
}

// signalWait bounds how long a check waits for a signal that must come; it
// fails only if the signal never comes.
const signalWait = 30 * time.Second

func testListenSignals(t *testing.T, b *bundle) {
	ch, err := b.st.Listen(b.ctx)
	require.NoError(t, err)
	tk := b.newTask()
	require.NoError(t, b.st.TaskInsert(b.ctx, tk, b.event(tk.ID, task.EvTaskAdded)))
	select {
	case _, ok := <-ch:
		require.True(t, ok, "the channel closed instead of signalling")
	case <-time.After(signalWait):
		t.Fatal("no signal after a committed write")
	}
	// A refused write commits nothing and need not signal, but a later
	// committed one must.
	require.Error(t, b.st.TaskInsert(b.ctx, tk)) // duplicate id
	require.NoError(t, b.st.EventAppend(b.ctx, b.event(tk.ID, task.EvUsage)))
	select {
	case <-ch:
	case <-time.After(signalWait):
		t.Fatal("no signal after the second committed write")
	}
}

func testListenCoalesces(t *testing.T, b *bundle) {
	ctx, cancel := context.WithCancel(b.ctx)
	ch, err := b.st.Listen(ctx)
	require.NoError(t, err)
	for range 20 {
		require.NoError(t, b.st.EventAppend(b.ctx, b.event("t1", task.EvUsage)))
	}
	// However many writes, a listener that does not read holds at most one
	// pending signal: a slow listener never blocks writers or grows.
	require.LessOrEqual(t, len(ch), 1)
	cancel()
	deadline := time.After(signalWait)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the channel did not close when its context ended")
		}
	}
}
