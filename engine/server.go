package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// Server serves one engine to any number of clients.
type Server struct {
	// Engine is what the clients see and command.
	Engine coord.Engine
	// Store replays the ledger to a client that resumes after a sequence
	// number.
	Store store.Store
	// Root is the repository the engine runs on, for the welcome.
	Root string
	// Version is the binary's version, for the handshake's messages.
	Version string
	// Stop, when set, stops the engine and every agent for a client's stop
	// request; it returns one line per session it stopped.
	Stop func(ctx context.Context) []string
	// KeepAgents, when set, makes the next Stop leave the agents that run
	// in session hosts running, for the next engine to take up.
	KeepAgents func()
	// Logf, when set, logs connections and refusals.
	Logf func(format string, args ...any)
	// Active, when set, is told of each request a client sends and each
	// pane or event pushed to one: the engine trims its memory once they
	// stop (host.TrimWhenQuiet).
	Active func()

	mu    sync.Mutex
	conns map[*wire.Conn]struct{}
	// stopping counts stop requests whose reply is not sent yet.
	stopping sync.WaitGroup
	closed   bool
	wg       sync.WaitGroup
	// viewers numbers the connections: each is one console to the pane
	// sizing (coord.ViewerEngine).
	viewers atomic.Uint64
}

// Serve accepts connections on ln until it is closed. Each unix peer of
// another user is refused with a message before any other byte is read.
func (s *Server) Serve(ln net.Listener) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if err := wire.Accept(nc); err != nil {
			s.logf("refused a connection: %v", err)
			continue
		}
		// Add under the lock Close takes before it waits, so no Add
		// runs concurrently with that Wait.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.ServeConn(nc)
		}()
	}
}

// Close tells every client the engine is going and closes their
// connections, then waits for their handlers.
func (s *Server) Close() {
	s.stopping.Wait()
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		_ = c.Push(opBye, 0, nil)
		_ = c.Close()
	}
	s.wg.Wait()
}

func (s *Server) active() {
	if s != nil && s.Active != nil {
		s.Active()
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// ServeConn speaks the protocol on one byte stream of any transport, until
// the peer goes or the server closes.
func (s *Server) ServeConn(rw io.ReadWriteCloser) {
	c := wire.NewConn(rw)
	defer c.Close()
	var h hello
	if wire.ReadHello(c, rw, "an orchestra-tui engine", &h) != nil {
		return
	}
	me := welcome{Protocol: ProtocolVersion, Version: s.Version, Pid: os.Getpid(), Root: s.Root}
	if h.Protocol != ProtocolVersion {
		ve := &VersionError{Client: h.Protocol, Engine: ProtocolVersion, ClientVersion: h.Version, EngineVersion: s.Version}
		s.logf("refused a %s of protocol %d (%s)", h.Client, h.Protocol, h.Version)
		b, _ := json.Marshal(me)
		_ = c.Send(wire.Frame{Op: opRefused, Body: b, Error: ve.Error()})
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.Send(wire.Frame{Op: opRefused, Error: "the engine is stopping"})
		return
	}
	if s.conns == nil {
		s.conns = map[*wire.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	if err := c.Push(opWelcome, 0, me); err != nil {
		return
	}
	viewer := fmt.Sprintf("console %d", s.viewers.Add(1))
	if ve, ok := s.Engine.(coord.ViewerEngine); ok {
		defer ve.LeaveViewer(viewer)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	watching := false
	for {
		f, err := c.Recv()
		if err != nil {
			return
		}
		s.active()
		switch f.Op {
		case opWatch:
			if watching {
				_ = c.Send(wire.Frame{ID: f.ID, Op: opError, Error: "already watching"})
				continue
			}
			var w watchReq
			_ = json.Unmarshal(f.Body, &w)
			watching = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.watch(ctx, c, w)
			}()
			_ = c.Send(wire.Frame{ID: f.ID, Op: opOK})
		case opInput, opResize:
			// Keys are applied in the order they came, on this goroutine.
			s.reply(c, f, s.handlePane(ctx, viewer, f))
		default:
			if f.Op == opStop {
				// Close waits for this reply before cutting connections:
				// the engine stops while the request is being served.
				s.stopping.Add(1)
			}
			wg.Add(1)
			go func(f wire.Frame) {
				defer wg.Done()
				s.reply(c, f, s.handle(ctx, f))
				if f.Op == opStop {
					s.stopping.Done()
				}
			}(f)
		}
	}
}

type result struct {
	v   any
	err error
}

func (s *Server) reply(c *wire.Conn, f wire.Frame, r result) {
	if r.err != nil {
		_ = c.Send(wire.Frame{ID: f.ID, Op: opError, Error: r.err.Error()})
		return
	}
	_ = c.Push(opOK, f.ID, r.v)
}

func (s *Server) handle(ctx context.Context, f wire.Frame) result {
	switch f.Op {
	case opSnapshot:
		return result{v: s.Engine.Snapshot()}
	case opDetail:
		var q taskReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return result{err: err}
		}
		d, err := s.Engine.Detail(ctx, q.Task, q.Query)
		return result{v: d, err: err}
	case opDiff:
		return s.serveDiff(ctx, f.Body)
	case opDo:
		var cmd coord.Command
		if err := json.Unmarshal(f.Body, &cmd); err != nil {
			return result{err: err}
		}
		res, err := s.Engine.Do(ctx, cmd)
		if err != nil {
			// The result may say what was done before the error.
			return result{err: err}
		}
		return result{v: res}
	case opInput:
		var q inputReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return result{err: err}
		}
		return result{err: s.Engine.Input(q.Task, q.Data)}
	case opResize:
		var q resizeReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return result{err: err}
		}
		return result{err: s.Engine.ResizePane(q.Task, q.Cols, q.Rows)}
	case opScrollback:
		var q scrollbackReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return result{err: err}
		}
		v, ok := s.Engine.Pane(q.Task)
		if !ok {
			return result{v: []string{}}
		}
		return result{v: v.Scrollback(q.N)}
	case opRecording:
		var q recordingReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return result{err: err}
		}
		if r, ok := s.Engine.(coord.Recorder); ok {
			rec, err := r.Recording(ctx, q.Task, q.Session)
			return result{v: rec, err: err}
		}
		rec, err := coord.ReadRecording(ctx, s.Store, s.Root, q.Task, q.Session)
		return result{v: rec, err: err}
	case opStop:
		if s.Stop == nil {
			return result{err: errors.New("this engine runs inside a console; quit that console to stop it")}
		}
		var q stopReq
		if len(f.Body) > 0 {
			if err := json.Unmarshal(f.Body, &q); err != nil {
				return result{err: err}
			}
		}
		if q.KeepAgents {
			if s.KeepAgents == nil {
				return result{err: errors.New("this engine cannot leave its agents running: they live inside it")}
			}
			s.KeepAgents()
		}
		return result{v: stopReply{Lines: s.Stop(ctx)}}
	default:
		return result{err: fmt.Errorf("unknown request %q (engine protocol %d)", f.Op, ProtocolVersion)}
	}
}

type watchReq struct {
	// After, when positive, replays the ledger's events after this
	// sequence number before the live ones: a client that lost its
	// connection resumes where it stopped.
	After int64 `json:"after,omitempty"`
	// Rows says the client applies a pane's changed rows (paneFrame.Set
	// over the rows it holds) and takes the plain text from the rows: its
	// frames carry each changed row once and no text. An engine older
	// than it ignores it and sends whole screens with their text, which
	// such a client reads as well.
	Rows bool `json:"rows,omitempty"`
	// Shift says the client, which takes rows, also moves the rows it
	// holds up by a frame's Shift before its Set applies: a scroll
	// costs the rows it brought in, not every row. An older client
	// does not say it and gets no shift.
	Shift bool `json:"shift,omitempty"`
}

type taskReq struct {
	Task task.ID `json:"task"`
	// Query narrows a detail request (coord.DetailQuery); absent reads all.
	Query coord.DetailQuery `json:"query,omitzero"`
}

// handlePane types into or sizes a pane for the connection's console:
// through the engine's pane sizing when it tells consoles apart, which
// answers a resize with the size the pty took.
func (s *Server) handlePane(ctx context.Context, viewer string, f wire.Frame) result {
	ve, ok := s.Engine.(coord.ViewerEngine)
	if !ok {
		return s.handle(ctx, f)
	}
	if f.Op == opInput {
		var q inputReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return result{err: err}
		}
		return result{err: ve.InputFor(viewer, q.Task, q.Data)}
	}
	var q resizeReq
	if err := json.Unmarshal(f.Body, &q); err != nil {
		return result{err: err}
	}
	cols, rows, err := ve.SizePaneFor(viewer, q.Task, q.Cols, q.Rows)
	return result{v: resizeReply{Cols: cols, Rows: rows}, err: err}
}

// resizeReply is the size a pane's pty took after a console's resize.
type resizeReply struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

type inputReq struct {
	Task task.ID `json:"task"`
	Data []byte  `json:"data"`
}

type resizeReq struct {
	Task task.ID `json:"task"`
	Cols int     `json:"cols"`
	Rows int     `json:"rows"`
}

type recordingReq struct {
	Task    task.ID `json:"task"`
	Session string  `json:"session,omitempty"`
}

type scrollbackReq struct {
	Task task.ID `json:"task"`
	N    int     `json:"n"`
}

// stopReq is a stop's body; absent, every agent stops with the engine.
type stopReq struct {
	KeepAgents bool `json:"keep_agents,omitempty"`
}

type stopReply struct {
	Lines []string `json:"lines"`
}

// paneRow is one changed row of a pane.
type paneRow struct {
	Y    int    `json:"y"`
	Line string `json:"l"`
}

// paneFrame is the newest screen of one pane.
type paneFrame struct {
	Task    task.ID `json:"task"`
	Session string  `json:"session,omitempty"`
	// Gone says the task has no live pane any more.
	Gone bool `json:"gone,omitempty"`
	Cols int  `json:"cols,omitempty"`
	Rows int  `json:"rows,omitempty"`
	// Lines are the screen's rows, each exactly Cols columns wide as
	// styled text, as the emulator writes them for a pane of its width: a
	// console whose pane has the pty's size (the pty follows the pane)
	// draws them as they are, with no ANSI parsed back.
	Lines []string `json:"lines,omitempty"`
	// Delta says the frame carries in Set only the rows that changed
	// since the frame before of the same session (Lines is then empty);
	// sent only to a client that asked (watchReq.Rows).
	Delta bool `json:"delta,omitempty"`
	// Shift moves the rows of the frame before up by that many rows
	// (session.RowsDelta) before Set applies; only in a Delta frame to a
	// client that asked (watchReq.Shift).
	Shift   int       `json:"shift,omitempty"`
	Set     []paneRow `json:"set,omitempty"`
	Text    string    `json:"text,omitempty"`
	X       int       `json:"x,omitempty"`
	Y       int       `json:"y,omitempty"`
	Cursor  bool      `json:"cursor,omitempty"`
	Title   string    `json:"title,omitempty"`
	Version uint64    `json:"version,omitempty"`
}
