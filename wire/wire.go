// Package wire is the framing the engine's and the session host's protocols
// share: newline-delimited JSON messages over any byte stream, each with an
// id that pairs a reply with its request, an op naming what it is, a body
// and an error; the calls a client makes over it (Caller); and the private
// unix socket both serve on (0600 in a 0700 directory, a peer of another
// uid refused through SO_PEERCRED).
package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// MaxFrame bounds one message. A pane screen with its styles is tens of
// kilobytes; a snapshot of thousands of tasks a few megabytes.
const MaxFrame = 64 << 20

// Ops every protocol on this framing shares.
const (
	// OpOK is a reply to a request that succeeded; its body is the result.
	OpOK = "ok"
	// OpError is a reply to a request that failed: Error says why (a
	// body may carry the error's structure).
	OpError = "error"
	// OpRefused answers a hello (or a connection) that is not accepted.
	OpRefused = "refused"
)

// Frame is one message in either direction.
type Frame struct {
	// ID pairs a reply with its request; pushes have none.
	ID uint64 `json:"id,omitempty"`
	// Op names the request, the reply's kind ("ok", "error") or the push.
	Op    string          `json:"op"`
	Body  json.RawMessage `json:"body,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Conn frames messages over a byte stream. Send and Push are safe for
// concurrent use; Recv must be called from one goroutine.
type Conn struct {
	r  *bufio.Reader
	w  io.Writer
	mu sync.Mutex
	c  io.Closer
}

// NewConn frames messages over rw; Close closes rw when it is an io.Closer.
func NewConn(rw io.ReadWriter) *Conn { return NewConnSize(rw, 64<<10) }

// NewConnSize is NewConn reading through a buffer of size bytes: a side
// that receives only small requests (a session host: keys, row requests)
// needs no 64 kB of it. A message longer than the buffer is still read
// whole.
func NewConnSize(rw io.ReadWriter, size int) *Conn {
	c := &Conn{r: bufio.NewReaderSize(rw, size), w: rw}
	if cl, ok := rw.(io.Closer); ok {
		c.c = cl
	}
	return c
}

// Send writes one frame.
func (c *Conn) Send(f Frame) error {
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

// pushJoin is the largest body Push copies behind its head to write the
// frame at once; a bigger one (a snapshot) is written after the head.
const pushJoin = 64 << 10

// Push sends a message whose body is v (none when v is nil). The frame is
// written around the body as encoding/json would write it (id, op, body),
// without scanning a body json.Marshal has just made compact once more: a
// snapshot of thousands of tasks is megabytes.
func (c *Conn) Push(op string, id uint64, v any) error {
	if v == nil {
		return c.Send(Frame{ID: id, Op: op})
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	head := make([]byte, 0, 48)
	head = append(head, '{')
	if id != 0 {
		head = append(head, `"id":`...)
		head = strconv.AppendUint(head, id, 10)
		head = append(head, ',')
	}
	head = append(head, `"op":`...)
	head = strconv.AppendQuote(head, op) // ops are plain ASCII names
	head = append(head, `,"body":`...)
	b = append(b, '}', '\n')
	if len(b) <= pushJoin {
		// One write, so the peer wakes once for the frame: written in two,
		// its reader could take the head alone, wait again for the rest,
		// and on a loaded machine each wake-up waits for a processor.
		head = append(head, b...)
		c.mu.Lock()
		defer c.mu.Unlock()
		_, err = c.w.Write(head)
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(head); err != nil {
		return err
	}
	_, err = c.w.Write(b)
	return err
}

// ErrTooLong is a message longer than MaxFrame.
var ErrTooLong = errors.New("protocol: message longer than the limit")

// Recv reads the next frame.
func (c *Conn) Recv() (Frame, error) {
	var line []byte
	for {
		chunk, err := c.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxFrame {
			return Frame{}, ErrTooLong
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
	if f, ok := splitFrame(line); ok {
		return f, nil
	}
	var f Frame
	if err := json.Unmarshal(line, &f); err != nil {
		return Frame{}, fmt.Errorf("protocol: %w", err)
	}
	return f, nil
}

// Close closes the stream.
func (c *Conn) Close() error {
	if c.c != nil {
		return c.c.Close()
	}
	return nil
}

// splitFrame reads a frame of the form Push writes, and encoding/json too
// for a message without an error: {"id":N,"op":"NAME","body":BODY}, taking
// BODY as it stands (its reader decodes, and so checks, it) instead of
// scanning megabytes twice. It reports false for any other form.
func splitFrame(line []byte) (Frame, bool) {
	var f Frame
	rest := bytes.TrimRight(line, "\r\n")
	if len(rest) < 2 || rest[0] != '{' || rest[len(rest)-1] != '}' {
		return f, false
	}
	rest = rest[1 : len(rest)-1]
	if r, ok := bytes.CutPrefix(rest, []byte(`"id":`)); ok {
		i := 0
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		id, err := strconv.ParseUint(string(r[:i]), 10, 64)
		if err != nil || i == len(r) || r[i] != ',' {
			return f, false
		}
		f.ID, rest = id, r[i+1:]
	}
	r, ok := bytes.CutPrefix(rest, []byte(`"op":"`))
	if !ok {
		return f, false
	}
	end := bytes.IndexByte(r, '"')
	if end <= 0 {
		return f, false
	}
	for _, b := range r[:end] {
		if !(b >= 'a' && b <= 'z' || b == '-' || b == '_') {
			return f, false
		}
	}
	f.Op = string(r[:end])
	body, ok := bytes.CutPrefix(r[end+1:], []byte(`,"body":`))
	// Only a body that ends the message and cannot be followed by an
	// error: not a reply that failed, nor a refusal.
	if !ok || len(body) == 0 || f.Op == OpError || f.Op == OpRefused {
		return f, false
	}
	// A body that is an object or an array closes where the message does.
	if last := body[len(body)-1]; !(body[0] == '{' && last == '}' || body[0] == '[' && last == ']') {
		return f, false
	}
	f.Body = body
	return f, true
}
