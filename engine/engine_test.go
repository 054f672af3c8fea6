package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

func TestSocketIsPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{})
	fi, err := os.Stat(b.eng.Paths.Dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Stat(b.eng.Paths.Socket)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestSecondEngineIsRefusedWithThePid(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{})
	_, err := Start(context.Background(), Params{Dir: b.root})
	var le *LockedError
	require.ErrorAs(t, err, &le)
	require.Equal(t, os.Getpid(), le.Pid)
	require.Contains(t, err.Error(), "orchestra-tui stop")
}

func TestClientRunsATaskAndSeesItsPane(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Behave: agent.BehaveStall, AwaitDecision: true}}}})
	cl := b.dial(t, true)
	ch, unsub := cl.Subscribe()
	defer unsub()
	id := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	// The snapshot came before the event that needed it.
	snap := cl.Snapshot()
	require.Len(t, snap.Tasks, 1)
	require.Equal(t, id, snap.Tasks[0].Task.ID)
	require.NotEmpty(t, snap.Tasks[0].SessionID)
	require.NotNil(t, snap.Tasks[0].Lease)

	// A correction from this client reaches the live pane, and the pane
	// pushed to the client shows it as the engine's own view does.
	res, err := cl.Do(context.Background(), coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: "use integers only", Author: "test"})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	waitPane(t, cl, ch, id, "use integers only")

	// Keys typed through the client reach the agent.
	// (The stalled agent no longer echoes; it logs what it was sent.)
	require.NoError(t, cl.Input(id, []byte("typed-through-engine\r")))
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(b.record, agent.InputsLogName))
		return strings.Contains(string(b), "typed-through-engine")
	}, 30*time.Second, 5*time.Millisecond)

	require.NoError(t, cl.ResizePane(id, 70, 20))
	require.Eventually(t, func() bool {
		v, ok := cl.Pane(id)
		if !ok {
			return false
		}
		c, r := v.Size()
		return c == 70 && r == 20
	}, 30*time.Second, 10*time.Millisecond)

	d, err := cl.Detail(context.Background(), id, coord.DetailQuery{})
	require.NoError(t, err)
	require.Equal(t, id, d.Task.ID)
	require.NotEmpty(t, d.Brief)
	require.Len(t, d.Decisions, 1)
}

// waitPane waits on notices until the client's pane of id shows want.
func waitPane(t *testing.T, cl *Client, ch <-chan coord.Notice, id task.ID, want string) {
	t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		if v, ok := cl.Pane(id); ok && strings.Contains(v.Text(), want) {
			return
		}
		select {
		case _, open := <-ch:
			require.True(t, open)
		case <-deadline.C:
			v, _ := cl.Pane(id)
			text := ""
			if v != nil {
				text = v.Text()
			}
			t.Fatalf("pane never showed %q; it shows:\n%s", want, text)
		}
	}
}

func TestTwoClientsSeeTheSameTasksPanesAndCorrections(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Behave: agent.BehaveStall, AwaitDecision: true}}}})
	one, two := b.dial(t, true), b.dial(t, true)
	ch1, u1 := one.Subscribe()
	defer u1()
	ch2, u2 := two.Subscribe()
	defer u2()
	id := addCalc(t, one, task.Pipeline{task.PhaseImplement})
	waitEvent(t, ch1, kindIs(task.EvBriefDelivered))
	waitEvent(t, ch2, kindIs(task.EvBriefDelivered))
	res, err := one.Do(context.Background(), coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: "from the first console", Author: "one"})
	require.NoError(t, err)
	t.Logf("correction: %+v", res)
	defer func() {
		if t.Failed() {
			v, _ := b.eng.Pane(id)
			t.Logf("engine's own pane:\n%s", v.Text())
		}
	}()
	ev := waitEvent(t, ch2, kindIs(task.EvDecisionRecorded))
	require.Contains(t, ev.Text, "from the first console")
	waitPane(t, two, ch2, id, "from the first console")
	s1, s2 := one.Snapshot(), two.Snapshot()
	require.Equal(t, len(s1.Tasks), len(s2.Tasks))
	require.Equal(t, s1.Tasks[0].SessionID, s2.Tasks[0].SessionID)
	require.Equal(t, s1.Tasks[0].Task.State, s2.Tasks[0].Task.State)
}

func TestAClientAttachingLaterGetsEveryPaneAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Behave: agent.BehaveStall, AwaitDecision: true}}}})
	ch, unsub := b.eng.Subscribe()
	defer unsub()
	id := addCalc(t, b.eng, task.Pipeline{task.PhaseImplement})
	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	cl := b.dial(t, true)
	// Dial returned: the pane is there without waiting for it to change.
	v, ok := cl.Pane(id)
	require.True(t, ok, "no pane right after attaching")
	// The agent may have drawn more since the attach (its spinner never
	// stops), so compare what it cannot change any more: the banner, with
	// its colours, and the prompt the brief was typed at.
	local, _ := b.eng.Pane(id)
	banner := func(r string) []string { return strings.SplitN(r, "\n", 5)[:4] }
	require.Equal(t, banner(local.Render()), banner(v.Render()))
	require.Contains(t, v.Text(), strings.TrimSpace(agent.ReadyMarker))

	// The rows came as the emulator writes them for a pane of its width:
	// the console takes them as they are, and cuts them only for another
	// width.
	rw, ok := v.(session.RowWriter)
	require.True(t, ok, "an engine's pane hands over rows")
	cols, _ := v.Size()
	want := local.(session.RowWriter).AppendRows(nil, 0, 4, cols)
	require.Equal(t, want, rw.AppendRows(nil, 0, 4, cols))
	for _, row := range rw.AppendRows(nil, 0, 4, cols/2) {
		require.Equal(t, cols/2, ansi.StringWidth(row))
	}
	require.Equal(t, []string{strings.Repeat(" ", 7)}, rw.AppendRows(nil, 10_000, 1, 7), "a row past the screen is blank")
}

func TestAnotherProtocolVersionIsToldWhatToDo(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{})
	nc, err := net.Dial("unix", b.eng.Paths.Socket)
	require.NoError(t, err)
	defer nc.Close()
	c := wire.NewConn(nc)
	require.NoError(t, c.Push(opHello, 0, hello{Protocol: ProtocolVersion + 1, Version: "v9.9.9", Client: "console"}))
	f, err := c.Recv()
	require.NoError(t, err)
	require.Equal(t, opRefused, f.Op)
	require.NotContains(t, f.Error, "\n")
	require.Contains(t, f.Error, fmt.Sprintf("protocol %d", ProtocolVersion+1))
	require.Contains(t, f.Error, fmt.Sprintf("protocol %d", ProtocolVersion))
	require.Contains(t, f.Error, "orchestra-tui stop")
	var w welcome
	require.NoError(t, json.Unmarshal(f.Body, &w))
	require.Equal(t, ProtocolVersion, w.Protocol)
	// The engine goes on serving.
	cl := b.dial(t, false)
	require.Equal(t, os.Getpid(), cl.Pid())
}

func TestTheProtocolRunsOverAnyByteStream(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{})
	srv := &Server{Engine: b.eng, Store: b.eng.Store, Version: "test"}
	a, z := net.Pipe()
	go srv.ServeConn(z)
	cl, err := NewClient(context.Background(), a, Options{Watch: true, Version: "test"})
	require.NoError(t, err)
	defer cl.Close()
	id := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	require.Eventually(t, func() bool {
		for _, tv := range cl.Snapshot().Tasks {
			if tv.Task.ID == id {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond)
}

// loadingEngine is an engine still loading its store: its snapshot is
// empty until loaded is closed, and waiting says a watch waits for it.
type loadingEngine struct {
	coord.Engine
	loaded  chan struct{}
	waiting chan struct{}
	once    sync.Once
}

func (e *loadingEngine) Loaded() <-chan struct{} {
	e.once.Do(func() { close(e.waiting) })
	return e.loaded
}

func (e *loadingEngine) Snapshot() coord.Snapshot {
	select {
	case <-e.loaded:
		return e.Engine.Snapshot()
	default:
		return coord.Snapshot{}
	}
}

// A console that attaches while the engine still loads its store (the
// socket is served from the start) gets its first snapshot once the store
// is loaded, never the empty one of the moment before: a console shows
// that first snapshot until an event comes, and on a quiet fleet none may.
func TestAWatchWaitsForTheLoad(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{})
	id := addCalc(t, b.eng, task.Pipeline{task.PhaseImplement})
	e := &loadingEngine{Engine: b.eng, loaded: make(chan struct{}), waiting: make(chan struct{})}
	srv := &Server{Engine: e, Store: b.eng.Store, Version: "test"}
	a, z := net.Pipe()
	go srv.ServeConn(z)
	type dialled struct {
		cl  *Client
		err error
	}
	done := make(chan dialled, 1)
	go func() {
		cl, err := NewClient(context.Background(), a, Options{Watch: true, Version: "test"})
		done <- dialled{cl, err}
	}()
	select {
	case <-e.waiting:
		close(e.loaded)
	case d := <-done:
		require.NoError(t, d.err)
		d.cl.Close()
		t.Fatal("the watch was ready before the engine had loaded its store")
	}
	d := <-done
	require.NoError(t, d.err)
	defer d.cl.Close()
	var ids []task.ID
	for _, tv := range d.cl.Snapshot().Tasks {
		ids = append(ids, tv.Task.ID)
	}
	require.Contains(t, ids, id, "the first snapshot is the loaded store's")
}

func TestStopEndsEveryAgentAndSaysSoPerSession(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Behave: agent.BehaveStall, AwaitDecision: true}}}})
	cl := b.dial(t, true)
	ch, unsub := cl.Subscribe()
	defer unsub()
	addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	ev := waitEvent(t, ch, kindIs(task.EvSessionLaunched))
	var ld coord.LaunchedData
	require.NoError(t, json.Unmarshal(ev.Data, &ld))
	waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	lines, err := cl.Stop(context.Background())
	require.NoError(t, err)
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], "killed")
	<-b.eng.Done()
	require.Error(t, processAlive(ld.Pid), "agent pid %d still alive", ld.Pid)
	<-cl.Done()
	require.True(t, cl.Stopping())
}

func TestAWatchResumesAfterASequenceNumber(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{})
	_, err := b.eng.Do(context.Background(), coord.Command{Kind: coord.CmdAdd, Task: &task.Task{Title: "one", Goal: "g", Verify: "true", Harness: "scripted"}})
	require.NoError(t, err)
	evs, err := b.eng.Store.EventList(context.Background(), store.EventListParams{})
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	after := evs[len(evs)-1].Seq
	_, err = b.eng.Do(context.Background(), coord.Command{Kind: coord.CmdCorrect, TaskID: evs[0].TaskID, Text: "written while detached", Author: "t"})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, b.eng.Paths.Socket, Options{Watch: true, After: after, Version: "test"})
	require.NoError(t, err)
	defer cl.Close()
	ch, unsub := cl.Subscribe()
	defer unsub()
	ev := waitEvent(t, ch, kindIs(task.EvDecisionRecorded))
	require.Contains(t, ev.Text, "written while detached")
	require.Greater(t, ev.Seq, after)
	require.Equal(t, ev.Seq, cl.LastSeq())
}

// A client's requests and what the engine pushes to a watcher reach
// Server.Active, the engine's idle trim: none before the first request,
// more as work goes on.
func TestAClientsRequestsAndPushesAreTheEnginesActivity(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{})
	var n atomic.Int32
	srv := &Server{Engine: b.eng, Store: b.eng.Store, Version: "test", Active: func() { n.Add(1) }}
	a, z := net.Pipe()
	go srv.ServeConn(z)
	require.Zero(t, n.Load(), "activity before any client spoke")
	cl, err := NewClient(context.Background(), a, Options{Watch: true, Version: "test"})
	require.NoError(t, err)
	defer cl.Close()
	watched := n.Load()
	require.NotZero(t, watched, "a watch request was no activity")
	addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	require.Greater(t, n.Load(), watched, "adding a task (a request, then events pushed) was no activity")
}
