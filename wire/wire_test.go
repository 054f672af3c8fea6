package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A pushed message reads back as what encoding/json would have framed,
// whether Recv takes the body as it stands or decodes the whole line.
func TestPushedFramesReadBack(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewConn(&buf)
	body := map[string]any{"tasks": []string{"a", `quote " and \ slash`}, "n": 3}
	require.NoError(t, c.Push("snap", 0, body))
	require.NoError(t, c.Push(OpOK, 42, body))
	require.NoError(t, c.Push("ready", 0, nil))
	require.NoError(t, c.Push("event", 7, []int{1, 2}))
	require.NoError(t, c.Send(Frame{ID: 9, Op: OpError, Error: "boom"}))
	want, err := json.Marshal(body)
	require.NoError(t, err)

	for _, w := range []Frame{{Op: "snap", Body: want}, {ID: 42, Op: OpOK, Body: want}, {Op: "ready"},
		{ID: 7, Op: "event", Body: json.RawMessage(`[1,2]`)}, {ID: 9, Op: OpError, Error: "boom"}} {
		f, err := c.Recv()
		require.NoError(t, err)
		require.Equal(t, w.ID, f.ID)
		require.Equal(t, w.Op, f.Op)
		require.Equal(t, w.Error, f.Error)
		if w.Body == nil {
			require.Empty(t, f.Body)
		} else {
			require.JSONEq(t, string(w.Body), string(f.Body))
		}
	}
}

// splitFrame takes only the forms that cannot hide an error or a second
// field after the body; the rest goes to encoding/json.
func TestSplitFrameLeavesOtherFormsToJSON(t *testing.T) {
	t.Parallel()
	f, ok := splitFrame([]byte(`{"id":3,"op":"ok","body":{"a":1}}` + "\n"))
	require.True(t, ok)
	require.Equal(t, Frame{ID: 3, Op: OpOK, Body: json.RawMessage(`{"a":1}`)}, f)
	for _, line := range []string{
		`{"id":3,"op":"error","body":{"a":1},"error":"x"}`, // an error may follow the body
		`{"op":"refused","body":{"a":1}}`,
		`{"op":"snap","body":1}`,         // a scalar body
		`{"op":"snap"}`,                  // no body
		`{"body":{},"op":"snap"}`,        // another order
		`{"id":x,"op":"snap","body":{}}`, // a bad id
		`{"op":"sn\"ap","body":{}}`,      // an escape in the op
		`{"op":"snap","body":{}`,         // cut short
		` {"op":"snap","body":{"a":1}}`,  // leading space
		`{"op":"snap", "body":{"a":1}}`,  // spacing
	} {
		_, ok := splitFrame([]byte(line + "\n"))
		require.False(t, ok, "%s", line)
	}
}

// Calls are paired with their replies by id, whatever the order the
// replies come in; Fail ends the calls waiting and every later one.
func TestCallerPairsRepliesAndFails(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	gone := errors.New("gone")
	cl := NewCaller(NewConn(a), gone)
	srv := NewConn(b)
	type res struct {
		f   Frame
		err error
	}
	got := make(chan res, 2)
	for _, op := range []string{"first", "second"} {
		go func() {
			f, err := cl.Call(context.Background(), op, map[string]string{"op": op})
			got <- res{f, err}
		}()
	}
	reqs := map[string]Frame{}
	for range 2 {
		f, err := srv.Recv()
		require.NoError(t, err)
		reqs[f.Op] = f
	}
	// Replies in the other order, each echoing its request's op.
	reader := NewConn(a)
	go func() {
		for {
			f, err := reader.Recv()
			if err != nil {
				return
			}
			cl.Reply(f)
		}
	}()
	for _, op := range []string{"second", "first"} {
		require.NoError(t, srv.Push(OpOK, reqs[op].ID, op))
	}
	for range 2 {
		r := <-got
		require.NoError(t, r.err)
		var op string
		require.NoError(t, json.Unmarshal(r.f.Body, &op))
		require.Equal(t, OpOK, r.f.Op)
		require.Equal(t, reqs[op].ID, r.f.ID, "the reply to %s went to another call", op)
	}

	waiting := make(chan error, 1)
	go func() {
		_, err := cl.Call(context.Background(), "third", nil)
		waiting <- err
	}()
	_, err := srv.Recv()
	require.NoError(t, err)
	cl.Fail(nil)
	require.ErrorIs(t, <-waiting, gone)
	_, err = cl.Call(context.Background(), "fourth", nil)
	require.ErrorIs(t, err, gone)
}

// countWrites counts the Write calls made on it.
type countWrites struct {
	bytes.Buffer
	n int
}

func (w *countWrites) Write(b []byte) (int, error) {
	w.n++
	return w.Buffer.Write(b)
}

// A small frame goes out in one write, so its reader wakes once for it; a
// body past pushJoin is written after its head, not copied.
func TestPushWritesASmallFrameAtOnce(t *testing.T) {
	var w countWrites
	c := NewConn(&w)
	if err := c.Push("do", 1, map[string]string{"Kind": "correct", "Text": "use integers"}); err != nil {
		t.Fatal(err)
	}
	if w.n != 1 {
		t.Errorf("a small frame took %d writes, want 1", w.n)
	}
	f, err := NewConn(&w.Buffer).Recv()
	if err != nil || f.ID != 1 || f.Op != "do" || !strings.Contains(string(f.Body), "use integers") {
		t.Fatalf("the frame read back is %+v, %v", f, err)
	}
	w.n = 0
	if err := c.Push("snapshot", 0, strings.Repeat("x", pushJoin+1)); err != nil {
		t.Fatal(err)
	}
	if w.n != 2 {
		t.Errorf("a frame past pushJoin took %d writes, want 2 (head, then the body uncopied)", w.n)
	}
}

// A small read buffer (a session host's) still reads a message many
// times its size, whole, and the ones after it.
func TestAMessageLongerThanTheBufferReadsWhole(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewConnSize(&buf, 16)
	long := strings.Repeat("row of a screen ", 1000)
	require.NoError(t, c.Push("rows", 3, map[string]string{"l": long}))
	require.NoError(t, c.Push(OpOK, 4, nil))
	f, err := c.Recv()
	require.NoError(t, err)
	require.Equal(t, uint64(3), f.ID)
	var got map[string]string
	require.NoError(t, json.Unmarshal(f.Body, &got))
	require.Equal(t, long, got["l"])
	f, err = c.Recv()
	require.NoError(t, err)
	require.Equal(t, Frame{ID: 4, Op: OpOK}, f)
}
