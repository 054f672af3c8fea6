package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// Options configure a client.
type Options struct {
	// Watch asks the engine to push the snapshot, events and panes: a
	// console watches, a one-shot CLI command does not.
	Watch bool
	// After resumes the event stream after this ledger sequence number.
	After int64
	// Version is this binary's version, named in handshake messages.
	Version string
	// Kind names the client in the engine's log ("console", "cli").
	Kind string
}

// ErrGone means the connection to the engine ended.
var ErrGone = errors.New("the engine is gone")

// Client is a connection to an engine. It implements coord.Engine, so the
// console runs on it exactly as on an in-process coordinator.
type Client struct {
	c       *wire.Conn
	calls   *wire.Caller
	welcome welcome

	mu    sync.Mutex
	panes map[task.ID]*paneView

	snap  atomic.Pointer[heldSnap]
	fan   coord.Fanout
	ready chan struct{}
	done  chan struct{}
	// lastSeq is the newest ledger sequence number seen, for a resume.
	lastSeq atomic.Int64
	// first is the subscription taken before the watch began, handed to
	// the first Subscribe: nothing pushed between the attach and the
	// console's subscription (a replay after a sequence number, an event
	// in between) is lost.
	first      <-chan coord.Notice
	firstUnsub func()
	bye        atomic.Bool
}

type heldSnap struct {
	s  coord.Snapshot
	at time.Time // when it arrived, to age its clocks
}

var _ coord.Engine = (*Client)(nil)

// Dial connects to the engine at a unix socket path.
func Dial(ctx context.Context, path string, o Options) (*Client, error) {
	nc, err := wire.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	return NewClient(ctx, nc, o)
}

// NewClient speaks the protocol over rw, which it owns from now on. With
// o.Watch it returns once the first snapshot and every live pane arrived,
// so the first frame a console draws is complete.
func NewClient(ctx context.Context, rw io.ReadWriteCloser, o Options) (*Client, error) {
	c := wire.NewConn(rw)
	cl := &Client{c: c, calls: wire.NewCaller(c, ErrGone), panes: map[task.ID]*paneView{},
		ready: make(chan struct{}), done: make(chan struct{})}
	stop := context.AfterFunc(ctx, func() { rw.Close() })
	defer stop()
	err := wire.Hello(c, hello{Protocol: ProtocolVersion, Version: o.Version, Client: o.Kind}, &cl.welcome)
	var ref *wire.Refusal
	switch {
	case errors.As(err, &ref):
		rw.Close()
		var w welcome
		if json.Unmarshal(ref.Body, &w) == nil && w.Protocol != 0 && w.Protocol != ProtocolVersion {
			return nil, &VersionError{Client: ProtocolVersion, Engine: w.Protocol, ClientVersion: o.Version, EngineVersion: w.Version}
		}
		return nil, err
	case err != nil:
		rw.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("engine handshake: %w", ctx.Err())
		}
		return nil, fmt.Errorf("engine handshake: %w", err)
	}
	if cl.welcome.Protocol != ProtocolVersion {
		rw.Close()
		return nil, &VersionError{Client: ProtocolVersion, Engine: cl.welcome.Protocol, ClientVersion: o.Version, EngineVersion: cl.welcome.Version}
	}
	cl.snap.Store(&heldSnap{at: time.Now()})
	go cl.read()
	if !o.Watch {
		return cl, nil
	}
	cl.first, cl.firstUnsub = cl.fan.Subscribe()
	if _, err := cl.call(ctx, opWatch, watchReq{After: o.After, Rows: true, Shift: true}); err != nil {
		cl.Close()
		return nil, err
	}
	select {
	case <-cl.ready:
		return cl, nil
	case <-cl.done:
		return nil, cl.Err()
	case <-ctx.Done():
		cl.Close()
		return nil, ctx.Err()
	}
}

// Pid is the engine's process id.
func (cl *Client) Pid() int { return cl.welcome.Pid }

// EngineVersion is the engine binary's version.
func (cl *Client) EngineVersion() string { return cl.welcome.Version }

// Done is closed when the connection ended.
func (cl *Client) Done() <-chan struct{} { return cl.done }

// Stopping reports whether the engine said it was stopping before the
// connection ended (as opposed to dying or the connection breaking).
func (cl *Client) Stopping() bool { return cl.bye.Load() }

// Err is why the connection ended.
func (cl *Client) Err() error {
	if err := cl.calls.Err(); err != nil {
		return err
	}
	return ErrGone
}

// LastSeq is the ledger sequence number of the newest event received.
func (cl *Client) LastSeq() int64 { return cl.lastSeq.Load() }

// Close ends the connection; the engine and its agents go on.
func (cl *Client) Close() error {
	err := cl.c.Close()
	<-cl.done
	return err
}

func (cl *Client) read() {
	var err error
	defer func() {
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			err = ErrGone
		}
		cl.calls.Fail(err)
		cl.c.Close()
		cl.fan.Close()
		close(cl.done)
	}()
	for {
		var f wire.Frame
		f, err = cl.c.Recv()
		if err != nil {
			return
		}
		switch f.Op {
		case opOK, opError:
			cl.calls.Reply(f)
		case opSnap:
			var ws wireSnap
			if err = json.Unmarshal(f.Body, &ws); err != nil {
				return
			}
			var s coord.Snapshot
			if s, err = fromWire(ws); err != nil {
				return
			}
			cl.snap.Store(&heldSnap{s: s, at: time.Now()})
			cl.dropEnded(s)
			// The engine pushes a snapshot that changed with no event too
			// (a slot freed, a relayed session appearing): a console told
			// only of events would show it at the next one.
			cl.fan.Snapshot()
		case opEvent:
			var ev task.Event
			if err = json.Unmarshal(f.Body, &ev); err != nil {
				return
			}
			if ev.Seq > cl.lastSeq.Load() {
				cl.lastSeq.Store(ev.Seq)
			}
			cl.fan.Event(ev)
		case opPane:
			var p paneFrame
			if err = wire.ReadBody(f.Body, &p); err != nil {
				return
			}
			cl.paneFrame(p)
		case opBehind:
			cl.fan.Behind()
		case opReady:
			close(cl.ready)
		case opBye:
			cl.bye.Store(true)
		}
	}
}

// call sends a request and waits for its reply.
func (cl *Client) call(ctx context.Context, op string, body any) (json.RawMessage, error) {
	f, err := cl.calls.Call(ctx, op, body)
	if err != nil {
		return nil, err
	}
	if f.Op == opError {
		return nil, errors.New(f.Error)
	}
	return f.Body, nil
}

// callWait bounds a request the coord.Engine method gives no context.
const callWait = 10 * time.Second

// Snapshot returns the newest snapshot the engine pushed, its lease and
// cache clocks aged to now. Its Tasks may be shared with other readers:
// treat them as read-only.
func (cl *Client) Snapshot() coord.Snapshot {
	h := cl.snap.Load()
	s := h.s
	d := time.Since(h.at)
	if d <= 0 {
		return s
	}
	if !s.At.IsZero() {
		s.At = s.At.Add(d)
	}
	// The tasks are copied only when a lease's clocks change: the
	// thousands of ended tasks of a big store are shared, read-only.
	tasks := s.Tasks
	copied := false
	for i := range tasks {
		if lv := tasks[i].Lease; lv != nil {
			if !copied {
				tasks = slices.Clone(tasks)
				copied = true
			}
			l := *lv
			l.Remaining = max(l.Remaining-d, 0)
			l.WindowOpensIn = max(l.WindowOpensIn-d, 0)
			l.SinceProgress += d
			tasks[i].Lease = &l
		}
	}
	s.Tasks = tasks
	bases := make([]coord.BaseView, len(s.Bases))
	copy(bases, s.Bases)
	for i := range bases {
		bases[i].ExpiresIn = max(bases[i].ExpiresIn-d, 0)
	}
	s.Bases = bases
	return s
}

// Subscribe follows the engine's notices, relayed with the coordinator's
// own delivery rules, and a Snapshot notice for every snapshot pushed. The
// first subscription of a watching client starts at the attach, so it sees
// every event the engine pushed since.
func (cl *Client) Subscribe() (<-chan coord.Notice, func()) {
	cl.mu.Lock()
	if cl.first != nil {
		ch, unsub := cl.first, cl.firstUnsub
		cl.first, cl.firstUnsub = nil, nil
		cl.mu.Unlock()
		return ch, unsub
	}
	cl.mu.Unlock()
	return cl.fan.Subscribe()
}

// Pane returns the newest screen the engine pushed for the task.
func (cl *Client) Pane(id task.ID) (session.View, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	v, ok := cl.panes[id]
	if !ok {
		return nil, false
	}
	return v, true
}

// FetchSnapshot asks the engine for its snapshot as of now, for a client
// that does not watch: a command that reads what only the engine knows,
// such as why a queued task waits (`status`).
func (cl *Client) FetchSnapshot(ctx context.Context) (coord.Snapshot, error) {
	var s coord.Snapshot
	b, err := cl.call(ctx, opSnapshot, nil)
	if err != nil {
		return s, err
	}
	err = json.Unmarshal(b, &s)
	return s, err
}

// Detail asks the engine for the task's slower facts, as q narrows them.
func (cl *Client) Detail(ctx context.Context, id task.ID, q coord.DetailQuery) (coord.Detail, error) {
	var d coord.Detail
	b, err := cl.call(ctx, opDetail, taskReq{Task: id, Query: q})
	if err != nil {
		return d, err
	}
	err = json.Unmarshal(b, &d)
	return d, err
}

// Do sends an operator command to the engine.
func (cl *Client) Do(ctx context.Context, c coord.Command) (coord.Result, error) {
	var r coord.Result
	b, err := cl.call(ctx, opDo, c)
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(b, &r)
	return r, err
}

// Input types bytes into the task's live pane.
func (cl *Client) Input(id task.ID, b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), callWait)
	defer cancel()
	_, err := cl.call(ctx, opInput, inputReq{Task: id, Data: b})
	return err
}

// ResizePane resizes the task's live pty and emulator.
func (cl *Client) ResizePane(id task.ID, cols, rows int) error {
	_, _, err := cl.SizePane(id, cols, rows)
	return err
}

// SizePane asks for the task's pane at cols x rows and returns the size
// its pty took: another console's under [pane] size = "latest" when that
// one typed into it last (coord.PaneSizer).
func (cl *Client) SizePane(id task.ID, cols, rows int) (int, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callWait)
	defer cancel()
	b, err := cl.call(ctx, opResize, resizeReq{Task: id, Cols: cols, Rows: rows})
	if err != nil {
		return 0, 0, err
	}
	var r resizeReply
	if len(b) > 0 && json.Unmarshal(b, &r) == nil && r.Cols > 0 {
		return r.Cols, r.Rows, nil
	}
	return cols, rows, nil // an engine that does not say took the size asked
}

// Stop asks the engine to stop every agent and itself; it returns a line
// per session stopped.
func (cl *Client) Stop(ctx context.Context) ([]string, error) {
	return cl.stop(ctx, nil)
}

// StopKeepingAgents stops the engine and leaves every agent that runs in a
// session host running, its task leased, for the next engine to take up
// (an upgrade of the binary); it returns a line per session.
func (cl *Client) StopKeepingAgents(ctx context.Context) ([]string, error) {
	return cl.stop(ctx, stopReq{KeepAgents: true})
}

func (cl *Client) stop(ctx context.Context, body any) ([]string, error) {
	b, err := cl.call(ctx, opStop, body)
	if err != nil {
		return nil, err
	}
	var r stopReply
	err = json.Unmarshal(b, &r)
	return r.Lines, err
}

func (cl *Client) scrollback(id task.ID, n int) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b, err := cl.call(ctx, opScrollback, scrollbackReq{Task: id, N: n})
	if err != nil {
		return nil
	}
	var out []string
	_ = json.Unmarshal(b, &out)
	return out
}

// paneFrame stores a pushed screen. A new session gets a new view, so a
// console's cache keyed on the view never mixes two sessions' screens.
func (cl *Client) paneFrame(p paneFrame) {
	cl.mu.Lock()
	if p.Gone {
		delete(cl.panes, p.Task)
		cl.mu.Unlock()
		cl.fan.Pane(p.Task)
		return
	}
	v := cl.panes[p.Task]
	if v == nil || v.session != p.Session {
		v = &paneView{cl: cl, id: p.Task, session: p.Session}
		cl.panes[p.Task] = v
	}
	cl.mu.Unlock()
	v.set(p)
	cl.fan.Pane(p.Task)
}

// dropEnded forgets the panes of tasks whose session ended.
func (cl *Client) dropEnded(s coord.Snapshot) {
	live := map[task.ID]string{}
	for _, tv := range s.Tasks {
		if tv.SessionID != "" {
			live[tv.Task.ID] = tv.SessionID
		}
	}
	var gone []task.ID
	cl.mu.Lock()
	for id, v := range cl.panes {
		if sid, ok := live[id]; !ok || (v.session != "" && sid != v.session) {
			delete(cl.panes, id)
			gone = append(gone, id)
		}
	}
	cl.mu.Unlock()
	for _, id := range gone {
		cl.fan.Pane(id)
	}
}

// Recording asks the engine for a session's recording and its ledger
// marks; the engine that ran the session serves it (the relay asks it).
func (cl *Client) Recording(ctx context.Context, id task.ID, sessionID string) (coord.Recording, error) {
	var r coord.Recording
	b, err := cl.call(ctx, opRecording, recordingReq{Task: id, Session: sessionID})
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(b, &r)
	return r, err
}
