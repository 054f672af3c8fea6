package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// nullEngine is a coord.Engine with no tasks that accepts every command:
// what the protocol fuzzer serves, so only the decoding is under test.
type nullEngine struct{}

func (nullEngine) Snapshot() coord.Snapshot { return coord.Snapshot{} }
func (nullEngine) Subscribe() (<-chan coord.Notice, func()) {
	ch := make(chan coord.Notice)
	var once sync.Once
	return ch, func() { once.Do(func() { close(ch) }) }
}
func (nullEngine) Pane(task.ID) (session.View, bool) { return nil, false }
func (nullEngine) Detail(context.Context, task.ID, coord.DetailQuery) (coord.Detail, error) {
	return coord.Detail{}, nil
}
func (nullEngine) Do(_ context.Context, c coord.Command) (coord.Result, error) {
	if c.Kind == "" {
		return coord.Result{}, fmt.Errorf("no command")
	}
	return coord.Result{}, nil
}
func (nullEngine) Input(task.ID, []byte) error        { return nil }
func (nullEngine) ResizePane(task.ID, int, int) error { return nil }

// fuzzConn is a connection that reads a fixed input and collects what the
// server writes.
type fuzzConn struct {
	r  io.Reader
	mu sync.Mutex
	w  bytes.Buffer
}

func (c *fuzzConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Write(p)
}
func (c *fuzzConn) Close() error { return nil }

// FuzzServeConn: whatever bytes a peer sends on the engine's socket (after
// a hello, or instead of one), the server answers only with well-formed
// frames, never panics, and returns when the peer goes.
func FuzzServeConn(f *testing.F) {
	hello := fmt.Sprintf(`{"op":"hello","body":{"protocol":%d,"version":"fuzz","client":"cli"}}`, ProtocolVersion) + "\n"
	f.Add(true, []byte(`{"id":1,"op":"snapshot"}`+"\n"))
	f.Add(true, []byte(`{"id":2,"op":"do","body":{"Kind":"correct","TaskID":"01ABC","Text":"use the stdlib"}}`+"\n"))
	f.Add(true, []byte(`{"id":3,"op":"input","body":{"task":"01ABC","data":"aGk="}}`+"\n"+`{"id":4,"op":"resize","body":{"task":"x","cols":-1,"rows":1e9}}`+"\n"))
	f.Add(true, []byte(`{"id":5,"op":"watch","body":{"after":7}}`+"\n"+`{"id":6,"op":"watch"}`+"\n"))
	f.Add(true, []byte(`{"id":7,"op":"scrollback","body":{"task":"x","n":-5}}`+"\n"+`{"id":8,"op":"stop"}`+"\n"))
	f.Add(true, []byte(`{"id":9,"op":"detail","body":{"task":"x","query":{"AfterSeq":3}}}`+"\n"+`{"op":"nope"}`+"\n"+`[`))
	f.Add(false, []byte(`{"op":"hello","body":{"protocol":999}}`+"\n"))
	f.Add(false, []byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, greet bool, data []byte) {
		in := data
		if greet {
			in = append([]byte(hello), data...)
		}
		c := &fuzzConn{r: bytes.NewReader(in)}
		s := &Server{Engine: nullEngine{}, Root: "/repo", Version: "fuzz"}
		s.ServeConn(c) // returns at the input's end: a hang fails the fuzzer
		sc := bufio.NewScanner(bytes.NewReader(c.w.Bytes()))
		sc.Buffer(nil, wire.MaxFrame)
		for sc.Scan() {
			var fr wire.Frame
			if err := json.Unmarshal(sc.Bytes(), &fr); err != nil || fr.Op == "" {
				t.Fatalf("the server wrote a frame that is not one (%v): %q", err, sc.Bytes())
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	})
}
