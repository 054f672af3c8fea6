package host

import (
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
	old  bool
	done chan struct{}
	// the bytes the host side wrote and read
	sent, recv atomic.Int64
}

// NewLoopback serves src. With old, it answers as a host older than
// opRows does ("unknown request"), so the client reads the whole rendered
// screen and its text each time.
func NewLoopback(src session.View, old bool) (*Loopback, error) {
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
	l := &Loopback{src: src, old: old, done: make(chan struct{})}
	l.srv = wire.NewConn(counted{Conn: b, sent: &l.sent, recv: &l.recv})
	c := wire.NewConn(a)
	cl := &Client{c: c, calls: wire.NewCaller(c, ErrLost), changed: make(chan struct{}, 1),
		done: make(chan struct{}), readDone: make(chan struct{})}
	cl.cols, cl.rows = src.Size()
	cl.view = &view{cl: cl}
	l.cl = cl
	go cl.read()
	go l.serve()
	return l, nil
}

func (l *Loopback) serve() {
	defer close(l.done)
	var rs rowSender
	for {
		f, err := l.srv.Recv()
		if err != nil {
			return
		}
		switch {
		case f.Op == opRows && !l.old:
			var q rowsReq
			if err := unmarshalOpt(f.Body, &q); err != nil {
				_ = l.srv.Send(wire.Frame{ID: f.ID, Op: opError, Error: err.Error()})
				continue
			}
			_ = l.srv.Push(opOK, f.ID, rs.reply(l.src, q))
		case f.Op == opScreen:
			_ = l.srv.Push(opOK, f.ID, screenOf(l.src))
		default:
			_ = l.srv.Send(wire.Frame{ID: f.ID, Op: opError, Error: fmt.Sprintf("unknown request %q (host protocol %d)", f.Op, ProtocolVersion)})
		}
	}
}

// View is the engine's view of the screen, as a Client of a host shows it.
func (l *Loopback) View() session.View { return l.cl.View() }

// Changed sends the change notice a host sends after src changed, and
// returns once the client has taken it.
func (l *Loopback) Changed() error {
	if err := l.srv.Push(opChanged, 0, changed{Version: l.src.Version()}); err != nil {
		return err
	}
	<-l.cl.Changed()
	return nil
}

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
