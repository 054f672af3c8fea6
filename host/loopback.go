package host

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// Loopback is a host's screen requests served over a socket pair inside
// one process, for benchmarks and tests of the way a screen takes from a
// host's emulator to the engine: src stands for the emulator, View is
// what the engine's Client shows of it. No pty, no agent, no process.
type Loopback struct {
	src  session.View
	cl   *Client
	srv  *wire.Conn
	mode LoopbackMode
	rs   rowSender
	// pushing: the client watches with pushed rows
	pushing atomic.Bool
	done    chan struct{}
	// the bytes the host side wrote and read
	sent, recv atomic.Int64
}

// LoopbackMode is the version of host a Loopback answers as.
type LoopbackMode int

const (
	// LoopbackPush is a host of this version: the changed rows come with
	// each change notice (Welcome.PushRows).
	LoopbackPush LoopbackMode = iota
	// LoopbackAsk is a host older than pushed rows: after each notice
	// the client asks for the changed rows (opRows).
	LoopbackAsk
	// LoopbackWhole is a host older than opRows: it answers "unknown
	// request", so the client reads the whole rendered screen and its
	// text each time (opScreen).
	LoopbackWhole
)

// NewLoopback serves src as a host of the given mode.
func NewLoopback(src session.View, mode LoopbackMode) (*Loopback, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	conn := func(fd int) (net.Conn, error) {
		f := os.NewFile(uintptr(fd), "loopback")
		defer f.Close()
		return net.FileConn(f)
	}
	a, err := conn(fds[0])
	if err != nil {
		syscall.Close(fds[1])
		return nil, err
	}
	b, err := conn(fds[1])
	if err != nil {
		a.Close()
		return nil, err
	}
	l := &Loopback{src: src, mode: mode, done: make(chan struct{})}
	l.srv = wire.NewConn(counted{Conn: b, sent: &l.sent, recv: &l.recv})
	c := wire.NewConn(a)
	cl := &Client{c: c, calls: wire.NewCaller(c, ErrLost), changed: make(chan struct{}, 1),
		done: make(chan struct{}), readDone: make(chan struct{})}
	cl.cols, cl.rows = src.Size()
	cl.welcome = Welcome{Protocol: ProtocolVersion, Cols: cl.cols, Rows: cl.rows, PushRows: mode == LoopbackPush}
	cl.view = &view{cl: cl}
	l.cl = cl
	go l.serve()
	if err := cl.start(context.Background()); err != nil {
		_ = l.srv.Close()
		<-l.done
		return nil, err
	}
	// The first rows' notice is taken: Changed waits for its own.
	select {
	case <-cl.changed:
	default:
	}
	return l, nil
}

// serve answers as ServeConn does, for the requests a view makes.
func (l *Loopback) serve() {
	defer close(l.done)
	for {
		f, err := l.srv.Recv()
		if err != nil {
			return
		}
		switch {
		case f.Op == opWatch:
			var q watchReq
			if err := unmarshalOpt(f.Body, &q); err != nil {
				_ = l.srv.Send(wire.Frame{ID: f.ID, Op: opError, Error: err.Error()})
				continue
			}
			if q.Rows && l.mode == LoopbackPush && !l.pushing.Load() {
				l.pushing.Store(true)
				if _, err := l.rs.push(l.srv, l.src, false, true); err != nil {
					return
				}
			}
			_ = l.srv.Push(opOK, f.ID, nil)
		case f.Op == opRows && l.mode != LoopbackWhole:
			var q rowsReq
			if err := unmarshalOpt(f.Body, &q); err != nil {
				_ = l.srv.Send(wire.Frame{ID: f.ID, Op: opError, Error: err.Error()})
				continue
			}
			if l.pushing.Load() {
				if _, err := l.rs.push(l.srv, l.src, q.Text, q.Have == 0); err != nil {
					return
				}
				_ = l.srv.Push(opOK, f.ID, nil)
				continue
			}
			_ = l.srv.Push(opOK, f.ID, l.rs.reply(l.src, q))
		case f.Op == opScreen:
			_ = l.srv.Push(opOK, f.ID, screenOf(l.src))
		default:
			_ = l.srv.Send(wire.Frame{ID: f.ID, Op: opError, Error: fmt.Sprintf("unknown request %q (host protocol %d)", f.Op, ProtocolVersion)})
		}
	}
}

// View is the engine's view of the screen, as a Client of a host shows it.
func (l *Loopback) View() session.View { return l.cl.View() }

// Changed sends the change notice a host sends after src changed (with
// the changed rows, to a client that watches with them), and returns once
// the client has taken it. A notice the client took before (the text it
// asked for comes as one) is forgotten first.
func (l *Loopback) Changed() error {
	select {
	case <-l.cl.changed:
	default:
	}
	var err error
	if l.pushing.Load() {
		_, err = l.rs.push(l.srv, l.src, false, false)
	} else {
		err = l.srv.Push(opChanged, 0, changed{Version: l.src.Version()})
	}
	if err != nil {
		return err
	}
	<-l.cl.Changed()
	return nil
}

// Pushing reports whether the client watches with pushed rows.
func (l *Loopback) Pushing() bool { return l.pushing.Load() }

// Bytes returns how many bytes the host side has written and read.
func (l *Loopback) Bytes() (sent, received int64) { return l.sent.Load(), l.recv.Load() }

// Close ends both sides.
func (l *Loopback) Close() {
	l.cl.Detach()
	_ = l.srv.Close()
	<-l.done
}

// counted counts the bytes a connection carries.
type counted struct {
	net.Conn
	sent, recv *atomic.Int64
}

func (c counted) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.recv.Add(int64(n))
	return n, err
}

// Write counts before it writes, so a reader that has the bytes finds
// them counted.
func (c counted) Write(p []byte) (int, error) {
	c.sent.Add(int64(len(p)))
	return c.Conn.Write(p)
}
