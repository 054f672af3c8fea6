package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Two engines of one machine share a PostgreSQL store; engine B holds the
// only session. A console attached to engine A draws its pane (A reaches
// B over B's socket, as B's heartbeat names this machine), resizes its pty,
// and a correction sent to A reaches B's agent once.
func TestRelayServesAnotherEnginesPane(t *testing.T) {
	t.Parallel()
	f := sessionOnB(t)
	b, record, notices, id, confirmed := f.b, f.record, f.notices, f.id, f.confirmed
	a := f.start("machine-a")
	require.NotNil(t, a.relay, "an engine on a shared store serves through the relay")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, a.Paths.Socket, Options{Watch: true, Version: "test", Kind: "console"})
	require.NoError(t, err)
	defer cl.Close()
	paneShows := func(what string, ok func(cols, rows int, text string) bool) {
		t.Helper()
		ch, unsub := cl.Subscribe()
		defer unsub()
		deadline := time.NewTimer(60 * time.Second)
		defer deadline.Stop()
		for {
			if v, found := cl.Pane(id); found {
				c, r := v.Size()
				if ok(c, r, ansi.Strip(v.Render())) {
					return
				}
			}
			select {
			case _, open := <-ch:
				require.True(t, open, "console A lost its engine")
			case <-deadline.C:
				text := ""
				if v, found := cl.Pane(id); found {
					text = ansi.Strip(v.Render())
				}
				t.Fatalf("console A's pane of machine-b's session never showed %s:\n%s", what, text)
			}
		}
	}
	paneShows("the agent's prompt", func(_, _ int, text string) bool {
		return strings.Contains(text, strings.TrimSpace(agent.ReadyMarker))
	})
	var tv coord.TaskView
	for _, v := range cl.Snapshot().Tasks {
		if v.Task.ID == id {
			tv = v
		}
	}
	require.Equal(t, "machine-b", tv.Host)
	require.Equal(t, confirmed.SessionID, tv.SessionID, "console A knows the session machine-b runs")
	require.NotNil(t, tv.Lease, "console A shows the lease machine-b holds")
	require.Equal(t, b.Holder(), tv.Lease.Holder)
	require.Positive(t, tv.Lease.Remaining)
	for _, v := range a.Opened.Snapshot().Tasks {
		require.Empty(t, v.SessionID, "the relay adds the session to a copy, never to the coordinator's own snapshot")
	}

	// The pty follows the pane of the console that draws it, wherever.
	require.NoError(t, cl.ResizePane(id, 100, 30))
	paneShows("the size console A asked for", func(cols, rows int, _ string) bool { return cols == 100 && rows == 30 })

	const correction = "through engine A: keep Add pure"
	_, err = cl.Do(ctx, coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: correction, Author: "ana"})
	require.NoError(t, err)
	paneShows("the correction", func(_, _ int, text string) bool {
		return strings.Contains(text, "received human decision: "+correction)
	})
	inputs, err := agent.ReadInputLog(record)
	require.NoError(t, err)
	n := 0
	for _, in := range inputs {
		if in.Kind == agent.InputDecision {
			n++
			require.Equal(t, confirmed.SessionID, in.Session)
		}
	}
	require.Equal(t, 1, n, "machine-b's agent received the correction once")

	// Parking from A's console parks the task on B, which stops its
	// session: the command went to the engine that holds it.
	_, err = cl.Do(ctx, coord.Command{Kind: coord.CmdPark, TaskID: id, Author: "ana"})
	require.NoError(t, err)
	waitEvent(t, notices, func(ev task.Event) bool {
		return ev.SessionID == confirmed.SessionID && ev.Kind == task.EvSessionExited
	})
	parked, err := b.Store.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, task.StateParked, parked.State)
}

// A pane size a console asks through engine A before A's relay reaches
// the engine that runs the session (A dials it once a console watches) is
// sent when it does, before A serves that engine's panes: the pty takes
// the console's size without the console asking again.
func TestRelaySendsASizeAskedBeforeItReachedTheHolder(t *testing.T) {
	t.Parallel()
	f := sessionOnB(t)
	a := f.start("machine-a")
	// No console watches A yet, so its relay has no connection to B.
	cols, rows, err := a.relay.SizePaneFor("console 1", f.id, 90, 28)
	require.NoError(t, err)
	require.Equal(t, [2]int{90, 28}, [2]int{cols, rows})
	v, ok := f.b.Opened.Pane(f.id)
	require.True(t, ok)
	c, r := v.Size()
	require.NotEqual(t, [2]int{90, 28}, [2]int{c, r}, "B's pty is at its start size before A reaches B")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, a.Paths.Socket, Options{Watch: true, Version: "test", Kind: "console"})
	require.NoError(t, err)
	defer cl.Close()
	ch, unsub := cl.Subscribe()
	defer unsub()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		if v, found := cl.Pane(f.id); found {
			c, r := v.Size()
			require.Equal(t, [2]int{90, 28}, [2]int{c, r}, "the first pane of B's session A serves is at the size asked")
			break
		}
		select {
		case _, open := <-ch:
			require.True(t, open, "the console lost engine A")
		case <-deadline.C:
			t.Fatal("engine A never served the pane of machine-b's session")
		}
	}
}

// A task parked through an engine that does not run it (a CLI command, no
// console watching, so nothing relayed) stops the session the other
// engine runs: that engine hears of the move through the store.
func TestParkThroughAnotherEngineStopsTheSession(t *testing.T) {
	t.Parallel()
	f := sessionOnB(t)
	notices, id, confirmed := f.notices, f.id, f.confirmed
	a := f.start("machine-a")
	_, err := a.Opened.Do(context.Background(), coord.Command{Kind: coord.CmdPark, TaskID: id, Author: "ana"})
	require.NoError(t, err)
	exited := waitEvent(t, notices, func(ev task.Event) bool {
		return ev.SessionID == confirmed.SessionID && ev.Kind == task.EvSessionExited
	})
	require.Contains(t, exited.Text, "parked through another engine")
}

// A resubmit and an extend sent to engine A from the CLI, with no console
// watching A (so no connection to B is kept), reach the engine that holds
// the session: A makes a connection for each command.
func TestCommandsFromTheCLIReachTheEngineHoldingTheSession(t *testing.T) {
	t.Parallel()
	f := sessionOnB(t)
	notices, id, confirmed := f.notices, f.id, f.confirmed
	a := f.start("machine-a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := Dial(ctx, a.Paths.Socket, Options{Version: "test", Kind: "cli"})
	require.NoError(t, err)
	defer cl.Close()
	require.Zero(t, a.relay.watchers.Load())

	_, err = cl.Do(ctx, coord.Command{Kind: coord.CmdResubmit, TaskID: task.ID(id.Short()), Author: "ana"})
	require.NoError(t, err)
	waitEvent(t, notices, func(ev task.Event) bool {
		return ev.SessionID == confirmed.SessionID && ev.Kind == task.EvResubmitted
	})
	res, err := cl.Do(ctx, coord.Command{Kind: coord.CmdExtend, TaskID: id, Author: "ana"})
	require.NoError(t, err, res.Message)
	waitEvent(t, notices, func(ev task.Event) bool {
		return ev.TaskID == id && ev.Kind == task.EvLeaseExtended
	})
}

// onB is a task whose plan session machine-b's engine runs and has
// confirmed, on a fresh shared PostgreSQL store; start starts another
// engine on that store.
type onB struct {
	start     func(host string) *Engine
	b         *Engine
	record    string // the scripted agent's record directory
	notices   <-chan coord.Notice
	id        task.ID
	confirmed task.Event
}

// sessionOnB sets up onB: the agent ignores its first brief, so its
// session stays live and still.
func sessionOnB(t *testing.T) onB {
	t.Helper()
	url := pgtest.Start(t).NewDatabase(t)
	script, record := writeScript(t, agent.Script{
		Phases: map[task.Phase][]agent.Entry{task.PhasePlan: {{Behave: agent.BehaveIgnoreFirst}}}})
	f := onB{record: record, start: func(host string) *Engine { return startOnStore(t, url, script, host) }}
	b := f.start("machine-b")
	f.b = b
	notices, unsub := b.Subscribe()
	t.Cleanup(unsub)
	f.notices = notices
	f.id = addCalc(t, b.Opened, task.Pipeline{task.PhasePlan})
	f.confirmed = waitEvent(t, notices, func(ev task.Event) bool {
		return ev.TaskID == f.id && ev.Kind == task.EvSessionConfirmed
	})
	return f
}

// startOnStore starts an engine on a calc project of its own, on the
// shared store at url, as machine host, its scripted agent running script.
func startOnStore(t *testing.T, url, script, host string) *Engine {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	e, err := Start(context.Background(), Params{Dir: root, Version: "test",
		Open: testOpenWith(script, false, func(c *config.Config) {
			c.Store.URL = url
			c.Fleet.Host = host
		})})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	return e
}

// A size asked through engine A before A's relay reaches B is answered as
// taken, but when the relay sends it, B's pty keeps the size of the console
// on machine-b that owns the pane ([pane] size = "latest"): the first pane
// A serves has B's size, so A's console shows it at that size and marks it
// sized by another console (the marker is drawn from the pane's size, not
// from the answer to the ask).
func TestAHeldSizeDoesNotOverrideTheHoldersOwner(t *testing.T) {
	t.Parallel()
	f := sessionOnB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	onB, err := Dial(ctx, f.b.Paths.Socket, Options{Watch: true, Version: "test", Kind: "console"})
	require.NoError(t, err)
	defer onB.Close()
	cols, rows, err := onB.SizePane(f.id, 100, 30)
	require.NoError(t, err)
	require.Equal(t, [2]int{100, 30}, [2]int{cols, rows}, "machine-b's console owns the pane")

	a := f.start("machine-a")
	cols, rows, err = a.relay.SizePaneFor("console 1", f.id, 90, 28)
	require.NoError(t, err)
	require.Equal(t, [2]int{90, 28}, [2]int{cols, rows}, "held: A cannot know yet what B will make of it")

	cl, err := Dial(ctx, a.Paths.Socket, Options{Watch: true, Version: "test", Kind: "console"})
	require.NoError(t, err)
	defer cl.Close()
	ch, unsub := cl.Subscribe()
	defer unsub()
	for {
		if v, found := cl.Pane(f.id); found {
			c, r := v.Size()
			require.Equal(t, [2]int{100, 30}, [2]int{c, r}, "A's first pane of B's session has the size B's owner gave it")
			break
		}
		select {
		case _, open := <-ch:
			require.True(t, open, "the console lost engine A")
		case <-ctx.Done():
			t.Fatal("engine A never served the pane of machine-b's session")
		}
	}
	v, ok := f.b.Opened.Pane(f.id)
	require.True(t, ok)
	c, r := v.Size()
	require.Equal(t, [2]int{100, 30}, [2]int{c, r}, "B's pty kept its owner's size")
}
