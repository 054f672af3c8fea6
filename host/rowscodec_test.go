package host

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/vt"
)

// Pushed rows read back the same through readRowsReply and through
// encoding/json, and readRowsReply reads what encoding/json writes.
func TestPushedRowsReadBackTheSameEitherWay(t *testing.T) {
	t.Parallel()
	for _, r := range []rowsReply{
		{Seq: 1, Version: 3, Cols: 4, Rows: 2, Lines: []string{"\x1b[31mab\x1b[m  ", `"\  `}, Modes: vt.Modes{BracketedPaste: true}},
		{Seq: 2, Version: 4, Cols: 4, Rows: 2, X: 3, Y: 1, Cursor: true, Title: "t", Base: 1, Shift: 1, Set: []rowAt{{Y: 1, Line: "変更"}}, Text: "ab\n変更", HasText: true},
		{Seq: 3, Version: 5, Cols: 4, Rows: 2, Base: 2, HasText: true},
	} {
		b, err := appendRowsReply(nil, &r)
		require.NoError(t, err)
		var viaJSON rowsReply
		require.NoError(t, json.Unmarshal(b, &viaJSON), "%s", b)
		require.Equal(t, r, viaJSON)
		got, err := readRowsReply(b)
		require.NoError(t, err)
		require.Equal(t, r, got)
		std, err := json.Marshal(r)
		require.NoError(t, err)
		got, err = readRowsReply(std)
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
}
