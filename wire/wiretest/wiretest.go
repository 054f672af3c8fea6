// Package wiretest checks a message type against the wire's body codec:
// what this version writes, any peer reads, and it reads what any peer
// writes.
package wiretest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/wire"
)

// ReadsBackEitherWay checks that v, pushed as op's body (wire.PushBody) and
// received (wire.Conn.Recv), reads back equal to v through wire.ReadBody
// and through encoding/json (a peer of an older version, which decodes
// with it), and that wire.ReadBody reads what encoding/json writes (an
// older peer's message) as v. v holds only what encoding/json carries
// unchanged: valid UTF-8, and nil rather than empty omitted slices.
func ReadsBackEitherWay[T any](t testing.TB, op string, v T) {
	t.Helper()
	var out bytes.Buffer
	c := wire.NewConn(&out)
	_, err := c.PushBody(op, &v, nil)
	require.NoError(t, err)
	f, err := c.Recv()
	require.NoError(t, err)
	require.Equal(t, op, f.Op)

	var viaJSON T
	require.NoError(t, json.Unmarshal(f.Body, &viaJSON), "%s", f.Body)
	require.Equal(t, v, viaJSON, "encoding/json reads %s", f.Body)
	var got T
	require.NoError(t, wire.ReadBody(f.Body, &got), "%s", f.Body)
	require.Equal(t, v, got, "wire.ReadBody reads %s", f.Body)

	std, err := json.Marshal(v)
	require.NoError(t, err)
	var fromStd T
	require.NoError(t, wire.ReadBody(std, &fromStd), "%s", std)
	require.Equal(t, v, fromStd, "wire.ReadBody reads encoding/json's %s", std)
}
