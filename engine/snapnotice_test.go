package engine

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/ui"
)

// A console attached to engine A shows the session machine-b's engine
// runs as soon as A's relay reaches B, though nothing happens that makes an
// event: B's agent sits still at its prompt. The snapshot naming the
// session (and its lease) is pushed without an event; the console used to
// store it and show it only at the next event, key or lease tick, and with
// no lease in its snapshot it armed no lease tick.
func TestConsoleShowsARelayedSessionWithoutAnEvent(t *testing.T) {
	t.Parallel()
	f := sessionOnB(t)
	a := f.start("machine-a")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, a.Paths.Socket, Options{Watch: true, Version: "test", Kind: "console"})
	require.NoError(t, err)
	defer cl.Close()
	m := ui.New(cl, ui.Options{NoAnim: true})
	for _, tv := range cl.Snapshot().Tasks {
		if tv.Task.ID == f.id && tv.Lease != nil {
			// The relay dials B only once a console watches, and A sends
			// its first snapshot at once: this is the ordering the test is
			// about. A relay faster than A's first snapshot tests nothing.
			t.Fatal("console A's first snapshot already has machine-b's lease; the relay won the race")
		}
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 40))
	stop := ui.Subscribe(tm.GetProgram(), cl)
	defer stop()
	// The lease strip of a task with a lease counts its renewals; one with
	// none says "lease · none".
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("renewals 0/")) },
		teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	tm.Quit()
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
