package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// bodyT has the shapes of the pane frames: strings of styled text, a list
// of them, a list of objects, integers and flags left out when zero.
type bodyT struct {
	S    string   `json:"s"`
	N    int      `json:"n,omitempty"`
	U    uint64   `json:"u,omitempty"`
	B    bool     `json:"b,omitempty"`
	L    []string `json:"l,omitempty"`
	Rows []struct {
		Y    int    `json:"y"`
		Line string `json:"l"`
	} `json:"rows,omitempty"`
}

func bodyOf(s string) bodyT {
	v := bodyT{S: s, N: -42, U: 1 << 40, B: true, L: []string{s, "x", s + s}}
	v.Rows = append(v.Rows, struct {
		Y    int    `json:"y"`
		Line string `json:"l"`
	}{Y: 3, Line: s})
	return v
}

// agrees checks that the body written for v is encoding/json's writing of
// it to the byte (invalid UTF-8 as U+FFFD), that encoding/json reads it as
// its own, and that ReadBody reads both as encoding/json does.
func agrees(t *testing.T, v bodyT) {
	t.Helper()
	b, err := AppendBody(nil, v)
	require.NoError(t, err)
	std, err := json.Marshal(v)
	require.NoError(t, err)
	require.Equal(t, string(std), string(b), "written as encoding/json writes it")
	var want bodyT
	require.NoError(t, json.Unmarshal(std, &want))
	var viaJSON bodyT
	require.NoError(t, json.Unmarshal(b, &viaJSON), "%s", b)
	require.Equal(t, want, viaJSON, "encoding/json reads %s", b)
	for _, in := range [][]byte{b, std} {
		var got bodyT
		require.NoError(t, ReadBody(in, &got), "%s", in)
		require.Equal(t, want, got, "ReadBody reads %s", in)
	}
}

var bodyStrings = []string{
	"", "plain", "\x1b[32m✓\x1b[m 変更 \"quoted\" back\\slash", "tab\tnl\ncr\r\x00\x07\x7f",
	"<html>&amp;", "emoji 👩‍💻 and \u2028 \u2029", "invalid \xff\xfe utf-8 \xe2\x82", "/slash/",
}

func TestBodiesAgreeWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range bodyStrings {
		agrees(t, bodyOf(s))
	}
	// Escapes encoding/json never writes but reads.
	var got bodyT
	require.NoError(t, ReadBody([]byte(` { "s" : "\u00e9\/\b\f\ud83d\ude00\ud800x" , "other": {"a":[1,-2.5e3,null,true,"z"]}, "n":0 } `), &got))
	var want bodyT
	require.NoError(t, json.Unmarshal([]byte(`{"s":"\u00e9\/\b\f\ud83d\ude00\ud800x"}`), &want))
	require.Equal(t, want.S, got.S)
	// What is not JSON of its type is an error, as it is to encoding/json.
	for _, bad := range []string{`{"s":1}`, `{"s":"x"`, `{"s":"x"} trailing`, `{"s":"a` + "\x01" + `"}`, `{"n":"1"}`, `[1]`, `{"s":"\q"}`} {
		require.Error(t, json.Unmarshal([]byte(bad), &got), "%s", bad)
		require.Error(t, ReadBody([]byte(bad), &got), "%s", bad)
	}
}

// FuzzBodiesAgreeWithEncodingJSON: any string in any field.
func FuzzBodiesAgreeWithEncodingJSON(f *testing.F) {
	for _, s := range bodyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { agrees(t, bodyOf(s)) })
}

// PushBody writes the message Push writes, in one write, reusing its
// buffer.
func TestPushBodyIsAPush(t *testing.T) {
	t.Parallel()
	var viaPush, viaBody bytes.Buffer
	v := bodyOf("\x1b[1mrow\x1b[m")
	require.NoError(t, NewConn(&viaPush).Push("pane", 0, v))
	c := NewConn(&viaBody)
	buf, err := c.PushBody("pane", v, nil)
	require.NoError(t, err)
	_, err = c.PushBody("pane", v, buf[:0])
	require.NoError(t, err)
	require.Equal(t, viaPush.String()+viaPush.String(), viaBody.String())
	f, err := c.Recv()
	require.NoError(t, err)
	var got bodyT
	require.NoError(t, ReadBody(f.Body, &got))
	require.Equal(t, v, got)
}
