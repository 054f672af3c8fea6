// Package engine runs the coordinator as a process of its own and serves it
// to consoles and the CLI over a unix socket, so agents outlive the console.
//
// The protocol is newline-delimited JSON over any byte stream (a unix socket
// today; `ssh host orchestra-tui attach --stdio` later): the client sends a
// hello naming its protocol version, the engine answers welcome or refused,
// then requests and replies carry ids while the engine pushes snapshots,
// events and pane screens to a client that asked to watch.
//
//	console ──┐                                  ┌── session ── agent (pty)
//	console ──┼── unix socket ── engine ─────────┼── session ── agent (pty)
//	CLI     ──┘   (versioned)    coord, leases,  └── session ── agent (pty)
//	                             verify, store
package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ProtocolVersion is the version of the wire protocol. Bump it on any
// change a peer of the previous version would misread; the handshake then
// tells the operator what to do instead of failing in the middle.
const ProtocolVersion = 1

// MaxFrame bounds one message. A pane screen with its styles is tens of
// kilobytes; a snapshot of thousands of tasks a few megabytes.
const MaxFrame = 64 << 20

// Frame is one message in either direction.
type Frame struct {
	// ID pairs a reply with its request; pushes have none.
	ID uint64 `json:"id,omitempty"`
	// Op names the request, the reply's kind ("ok", "error") or the push.
	Op    string          `json:"op"`
	Body  json.RawMessage `json:"body,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Requests a client sends.
const (
	opHello      = "hello"
	opWatch      = "watch"
	opSnapshot   = "snapshot"
	opDetail     = "detail"
	opDo         = "do"
	opInput      = "input"
	opResize     = "resize"
	opScrollback = "scrollback"
	opStop       = "stop"
)

// Replies and pushes the engine sends.
const (
	opWelcome = "welcome"
	opRefused = "refused"
	opOK      = "ok"
	opError   = "error"
	opSnap    = "snap"   // push: the current snapshot
	opEvent   = "event"  // push: one ledger event
	opPane    = "pane"   // push: the newest screen of one pane
	opBehind  = "behind" // push: this console fell behind; reread from the ledger
	opReady   = "ready"  // push: the first snapshot and every live pane were sent
	opBye     = "bye"    // push: the engine is stopping
)

// hello is the client's first message.
type hello struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"` // the binary's version, for messages
	Client   string `json:"client"`  // "console", "cli"
}

// welcome is the engine's answer to a hello it accepts.
type welcome struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Pid      int    `json:"pid"`
	Root     string `json:"root"`
}

// VersionError is a handshake between two protocol versions.
type VersionError struct {
	Client, Engine               int
	ClientVersion, EngineVersion string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("this orchestra-tui (%s) speaks engine protocol %d but the running engine (%s) speaks protocol %d; run `orchestra-tui stop` (agents stop, their tasks requeue without losing an attempt) and start again to run this version's engine",
		e.ClientVersion, e.Client, e.EngineVersion, e.Engine)
}

// conn frames messages over a byte stream. Send is safe for concurrent use;
// Recv must be called from one goroutine.
type conn struct {
	r  *bufio.Reader
	w  io.Writer
	mu sync.Mutex
	c  io.Closer
}

func newConn(rw io.ReadWriter) *conn {
	c := &conn{r: bufio.NewReaderSize(rw, 64<<10), w: rw}
	if cl, ok := rw.(io.Closer); ok {
		c.c = cl
	}
	return c
}

func (c *conn) send(f Frame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(b)
	return err
}

// push sends a message whose body is v.
func (c *conn) push(op string, id uint64, v any) error {
	f := Frame{ID: id, Op: op}
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		f.Body = b
	}
	return c.send(f)
}

var errTooLong = errors.New("engine protocol: message longer than the limit")

func (c *conn) recv() (Frame, error) {
	var line []byte
	for {
		chunk, err := c.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxFrame {
			return Frame{}, errTooLong
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(bytes.TrimSpace(line)) > 0 {
				return Frame{}, io.ErrUnexpectedEOF
			}
			return Frame{}, err
		}
		break
	}
	var f Frame
	if err := json.Unmarshal(line, &f); err != nil {
		return Frame{}, fmt.Errorf("engine protocol: %w", err)
	}
	return f, nil
}

func (c *conn) close() error {
	if c.c != nil {
		return c.c.Close()
	}
	return nil
}
