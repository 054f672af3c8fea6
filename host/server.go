package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// Server serves one session to its clients: normally one engine at a time,
// but a second one (a test, an engine re-adopting before the first
// connection's end was noticed) is served the same way.
type Server struct {
	sess    *session.Session
	base    Welcome
	logf    func(string, ...any)
	mu      sync.Mutex
	watches map[chan struct{}]struct{}
	exit    *Exit
	inputs  []string      // keys of the keyed inputs begun, in order
	exited  chan struct{} // closed once exit is set
	collect chan struct{} // closed when a client collected the exit
	once    sync.Once
	wg      sync.WaitGroup
	// active, when set, is told of each change of the screen and each
	// request: the host trims its memory once they stop (trimmer).
	active func()
	dm     deadMan // the dead-man switch (opTrust)
}

// NewServer serves s, a session of taskID named sessionID. logf (nil: no
// log) receives connections and refusals; active (nil: none) is called on
// each change of the screen and each request.
func NewServer(s *session.Session, taskID, sessionID, version string, logf func(string, ...any), active func()) *Server {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cols, rows := s.Size()
	srv := &Server{
		sess: s, logf: logf, active: active, watches: map[chan struct{}]struct{}{},
		exited: make(chan struct{}), collect: make(chan struct{}),
		base: Welcome{Protocol: ProtocolVersion, Version: version, HostPid: os.Getpid(), Pid: s.Pid(),
			Task: taskID, Session: sessionID, Cols: cols, Rows: rows, StartedAt: time.Now().UTC(), PushRows: true},
	}
	srv.dm.srv = srv
	go srv.fanout()
	return srv
}

// fanout is the session's one reader of Changed: it wakes every watching
// client, and records the exit once the session is torn down.
func (srv *Server) fanout() {
	for {
		select {
		case <-srv.sess.Changed():
			srv.poke()
			srv.touch()
		case <-srv.sess.Done():
			var remain []int
			var rem *session.RemainError
			if errors.As(srv.sess.TreeErr(), &rem) {
				remain = rem.Pids
			}
			srv.mu.Lock()
			srv.exit = &Exit{Code: srv.sess.ExitCode(), At: time.Now().UTC(), Remain: remain}
			srv.mu.Unlock()
			close(srv.exited)
			srv.dm.stop()
			srv.logf("agent (pid %d) exited with code %d", srv.base.Pid, srv.exit.Code)
			srv.poke()
			return
		}
	}
}

func (srv *Server) touch() {
	if srv.active != nil {
		srv.active()
	}
}

func (srv *Server) poke() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for ch := range srv.watches {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Exited is closed once the agent has exited and its tree is torn down.
func (srv *Server) Exited() <-chan struct{} { return srv.exited }

// Collected is closed once a client has collected the agent's exit: the
// host's work is done.
func (srv *Server) Collected() <-chan struct{} { return srv.collect }

// Serve accepts clients on ln until it is closed. A peer of another user is
// refused before anything else is read.
func (srv *Server) Serve(ln net.Listener) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				srv.wg.Wait()
				return nil
			}
			return err
		}
		if err := wire.Accept(nc); err != nil {
			srv.logf("refused a connection: %v", err)
			continue
		}
		srv.wg.Add(1)
		go func() {
			defer srv.wg.Done()
			srv.ServeConn(nc)
		}()
	}
}

// ServeConn speaks the host protocol on one stream until the peer goes.
// Whatever a request started (a wait for the ready prompt, a checked
// delivery) is cancelled with it: the agent is never touched by a client
// leaving.
func (srv *Server) ServeConn(rw io.ReadWriteCloser) {
	c := wire.NewConnSize(rw, 4<<10) // the client's requests are small
	defer c.Close()
	var h hello
	if wire.ReadHello(c, rw, "an orchestra-tui session host", &h) != nil {
		return
	}
	me := srv.welcome()
	if h.Protocol != ProtocolVersion {
		b, _ := json.Marshal(me)
		_ = c.Send(wire.Frame{Op: opRefused, Body: b, Error: (&VersionError{Client: h.Protocol, Host: ProtocolVersion, HostVersion: srv.base.Version}).Error()})
		return
	}
	if err := c.Push(opWelcome, 0, me); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	watching, pushing := false, false
	var rs rowSender
	for {
		f, err := c.Recv()
		if err != nil {
			return
		}
		srv.touch()
		switch f.Op {
		case opWatch:
			var q watchReq
			if err := unmarshalOpt(f.Body, &q); err != nil {
				srv.reply(c, f, nil, err)
				continue
			}
			if !watching {
				watching = true
				var push *rowSender
				var sent uint64
				if q.Rows {
					// Every row before the reply: the client shows
					// the screen as soon as it is watching.
					pushing, push = true, &rs
					if sent, err = rs.push(c, srv.sess.View(), false, true); err != nil {
						return
					}
				}
				wg.Add(1)
				go func() { defer wg.Done(); srv.watch(ctx, c, push, sent) }()
			}
			srv.reply(c, f, nil, nil)
		case opRows:
			// Off the read loop, as a screen read below.
			wg.Add(1)
			go func(f wire.Frame, pushing bool) {
				defer wg.Done()
				var q rowsReq
				if err := unmarshalOpt(f.Body, &q); err != nil {
					srv.reply(c, f, nil, err)
					return
				}
				if pushing {
					// The rows (and the text asked for) go as a
					// notice, in order with the others; the reply
					// follows it.
					_, err := rs.push(c, srv.sess.View(), q.Text, q.Have == 0)
					srv.reply(c, f, nil, err)
					return
				}
				srv.reply(c, f, rs.reply(srv.sess.View(), q), nil)
			}(f, pushing)
		case opWaitReady, opDeliver, opSend, opSubmit, opStop, opScreen, opScrollback, opCPU, opTrust:
			// They wait on the screen or on the agent's end, or read a
			// screen or its history while a flooding agent holds the
			// emulator, or /proc, or a freeze's confirmation (a
			// trust): off the read loop, so a key typed meanwhile is
			// written at once, never behind them.
			wg.Add(1)
			go func(f wire.Frame) {
				defer wg.Done()
				v, err := srv.handle(ctx, f)
				srv.reply(c, f, v, err)
			}(f)
		default:
			// Keys, pastes and resizes are applied in the order they came.
			v, err := srv.handle(ctx, f)
			srv.reply(c, f, v, err)
		}
	}
}

func (srv *Server) welcome() Welcome {
	w := srv.base
	w.Cols, w.Rows = srv.sess.Size()
	srv.mu.Lock()
	w.Exit = srv.exit
	w.Inputs, w.InputsKnown = slices.Clone(srv.inputs), true
	srv.mu.Unlock()
	return w
}

// begin records that the input named key is being typed, before its
// first byte reaches the pty: an engine that dies from here on finds it
// in the welcome and does not type it again.
func (srv *Server) begin(key string) {
	if key == "" {
		return
	}
	srv.mu.Lock()
	srv.inputs = append(srv.inputs, key)
	srv.mu.Unlock()
}

func (srv *Server) reply(c *wire.Conn, f wire.Frame, v any, err error) {
	if err != nil {
		msg, body := encodeErr(err)
		_ = c.Send(wire.Frame{ID: f.ID, Op: opError, Error: msg, Body: body})
		return
	}
	_ = c.Push(opOK, f.ID, v)
}

// watch pushes a change notice whenever the screen changed since the last
// one (one pending at most: a slow client sees the newest version), and the
// exit once. With rs the notices carry the changed rows (rowSender.push),
// and sent is the version the first of them, already sent, carried.
func (srv *Server) watch(ctx context.Context, c *wire.Conn, rs *rowSender, sent uint64) {
	ch := make(chan struct{}, 1)
	srv.mu.Lock()
	srv.watches[ch] = struct{}{}
	srv.mu.Unlock()
	defer func() {
		srv.mu.Lock()
		delete(srv.watches, ch)
		srv.mu.Unlock()
	}()
	view := srv.sess.View()
	notify := func(v uint64) (uint64, error) {
		if rs != nil {
			return rs.push(c, view, false, false)
		}
		return v, c.Push(opChanged, 0, changed{Version: v})
	}
	// What changed before the watch began is announced at once.
	ch <- struct{}{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-srv.exited:
			if v := view.Version(); v != sent {
				_, _ = notify(v)
			}
			srv.mu.Lock()
			e := srv.exit
			srv.mu.Unlock()
			_ = c.Push(opExit, 0, e)
			return
		}
		if v := view.Version(); v != sent {
			var err error
			if sent, err = notify(v); err != nil {
				return
			}
		}
	}
}

func (srv *Server) handle(ctx context.Context, f wire.Frame) (any, error) {
	s := srv.sess
	switch f.Op {
	case opScreen:
		return screenOf(s.View()), nil
	case opCPU:
		d, ok := s.CPU()
		return cpu{CPU: d, Known: ok}, nil
	case opTrust:
		var q trustReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return nil, err
		}
		if q.ForMS < 0 {
			return nil, fmt.Errorf("a trust for %d ms", q.ForMS)
		}
		d := time.Duration(q.ForMS) * time.Millisecond
		if q.UntilMonoNS > 0 {
			if now := monoNow(); now > 0 {
				d = min(d, time.Duration(q.UntilMonoNS-now))
			}
		}
		return nil, srv.dm.trust(d)
	case opScrollback:
		var q nReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return nil, err
		}
		return s.View().Scrollback(q.N), nil
	case opWrite:
		var q writeReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return nil, err
		}
		return nil, s.Write(q.Data)
	case opPaste, opNotice, opDeliver, opSend:
		var q textReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return nil, err
		}
		switch f.Op {
		case opPaste:
			return nil, s.Paste(q.Text)
		case opNotice:
			return nil, s.Notice(q.Text)
		case opDeliver:
			srv.begin(q.Key)
			return nil, s.DeliverChecked(ctx, q.Text)
		default:
			srv.begin(q.Key)
			return nil, s.SendChecked(ctx, q.Text)
		}
	case opSubmit:
		return nil, s.SubmitChecked(ctx)
	case opResize:
		var q sizeReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return nil, err
		}
		return nil, s.Resize(q.Cols, q.Rows)
	case opWaitReady:
		return nil, s.WaitReady(ctx)
	case opStop:
		var q stopReq
		if err := json.Unmarshal(f.Body, &q); err != nil {
			return nil, err
		}
		if q.Grace <= 0 {
			q.Grace = 2 * time.Second
		}
		return nil, s.Stop(q.Grace)
	case opCollect:
		select {
		case <-srv.exited:
		default:
			return nil, errors.New("the agent still runs; stop it first")
		}
		srv.once.Do(func() { close(srv.collect) })
		return nil, nil
	default:
		return nil, fmt.Errorf("unknown request %q (host protocol %d)", f.Op, ProtocolVersion)
	}
}

// screenOf captures the session's screen. The version is read first: if
// the screen changes while it is read, the next notice carries a higher
// version and the client reads it again.
func screenOf(v session.View) screen {
	ver := v.Version()
	cols, rows := v.Size()
	x, y, vis := v.Cursor()
	sc := screen{Version: ver, Cols: cols, Rows: rows, Render: v.Render(), Text: v.Text(), X: x, Y: y, Cursor: vis, Title: v.Title()}
	if m, ok := v.(session.ModeReporter); ok {
		sc.Modes = m.Modes()
	}
	return sc
}

// unmarshalOpt decodes a request's body, where an absent body means the
// zero request.
func unmarshalOpt(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}
