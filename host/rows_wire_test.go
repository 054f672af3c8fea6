package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/vt"
	"github.com/orchestra-tui/orchestra-tui/wire"
	"github.com/orchestra-tui/orchestra-tui/wire/wiretest"
)

// Pushed rows read back the same through this version's client and
// through encoding/json (an older engine), and the client reads what
// encoding/json writes (an older host).
func TestPushedRowsReadBackTheSameEitherWay(t *testing.T) {
	t.Parallel()
	for _, r := range []rowsReply{
		{Seq: 1, Version: 3, Cols: 4, Rows: 2, Lines: []string{"\x1b[31mab\x1b[m  ", `"\  `}, Modes: vt.Modes{BracketedPaste: true, Mouse: 1006}},
		{Seq: 2, Version: 4, Cols: 4, Rows: 2, X: 3, Y: 1, Cursor: true, Title: "t", Base: 1, Shift: 1, Set: []rowAt{{Y: 1, Line: "変更"}}, Text: "ab\n変更", HasText: true},
		{Seq: 3, Version: 5, Cols: 4, Rows: 2, Base: 2, HasText: true},
	} {
		wiretest.ReadsBackEitherWay(t, opChanged, r)
	}
}

// Pushed rows as the host before this codec wrote them (its hand-written
// writer: HTML characters unescaped) read as they did: a host left running
// through an upgrade (stop --keep-agents) is read by the new engine, and
// the host protocol's version stays.
func TestRowsPushedByTheHostBeforeReadTheSame(t *testing.T) {
	t.Parallel()
	old := `{"seq":2,"version":4,"cols":6,"rows":2,"x":3,"y":1,"cursor":true,"title":"<t&>","modes":{"BracketedPaste":true,"AppCursor":false,"AppKeypad":false,"FocusEvents":false,"Mouse":1006,"MouseEncoding":0},"base":1,"shift":1,"set":[{"y":1,"l":"\u001b[1m変更\u001b[m  "}],"text":"ab\n変更","has_text":true}`
	var got rowsReply
	require.NoError(t, wire.ReadBody([]byte(old), &got))
	require.Equal(t, rowsReply{Seq: 2, Version: 4, Cols: 6, Rows: 2, X: 3, Y: 1, Cursor: true, Title: "<t&>", Modes: vt.Modes{BracketedPaste: true, Mouse: 1006}, Base: 1, Shift: 1, Set: []rowAt{{Y: 1, Line: "\x1b[1m変更\x1b[m  "}}, Text: "ab\n変更", HasText: true}, got)
}
