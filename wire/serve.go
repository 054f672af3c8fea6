package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// OpHello is a client's first message; OpWelcome accepts it.
const (
	OpHello   = "hello"
	OpWelcome = "welcome"
)

// HelloWait bounds how long a new connection may take to say hello.
const HelloWait = 10 * time.Second

// Accept vets a connection a server has just accepted: a unix peer of
// another user is told why it is refused and closed, and the error says
// so for the server's log; any other must say hello within HelloWait.
func Accept(nc net.Conn) error {
	if uc, ok := nc.(*net.UnixConn); ok {
		if err := CheckPeer(uc); err != nil {
			_ = NewConn(nc).Send(Frame{Op: OpRefused, Error: err.Error()})
			nc.Close()
			return err
		}
	}
	_ = nc.SetReadDeadline(time.Now().Add(HelloWait))
	return nil
}

// ReadHello reads a connection's first message, which must be a hello
// whose body decodes into v, and lifts Accept's deadline. A peer that
// sends anything else is told that this is server (say, "an orchestra-tui
// engine"); a peer that goes or stays silent gets nothing. Either way the
// error says what happened.
func ReadHello(c *Conn, rw io.ReadWriter, server string, v any) error {
	f, err := c.Recv()
	if err != nil {
		return err
	}
	if nc, ok := rw.(net.Conn); ok {
		_ = nc.SetReadDeadline(time.Time{})
	}
	if f.Op != OpHello || json.Unmarshal(f.Body, v) != nil {
		_ = c.Send(Frame{Op: OpRefused, Error: "this is " + server + "; the first message must be a hello"})
		return fmt.Errorf("the first message was %q, not a hello", f.Op)
	}
	return nil
}

// Refusal is a hello the server refused: what it said, and the body it
// sent along (its own welcome, naming its protocol version, when the
// versions differ).
type Refusal struct {
	Msg  string
	Body json.RawMessage
}

func (r *Refusal) Error() string { return r.Msg }

// Hello sends hello and reads the server's answer: a welcome decoded into
// welcome, or a *Refusal.
func Hello(c *Conn, hello, welcome any) error {
	if err := c.Push(OpHello, 0, hello); err != nil {
		return err
	}
	f, err := c.Recv()
	if err != nil {
		return err
	}
	if f.Op == OpRefused {
		return &Refusal{Msg: f.Error, Body: f.Body}
	}
	if f.Op != OpWelcome || json.Unmarshal(f.Body, welcome) != nil {
		return errors.New("unexpected " + fmt.Sprintf("%q", f.Op) + " instead of a welcome")
	}
	return nil
}
