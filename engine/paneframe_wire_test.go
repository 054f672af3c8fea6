package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/wire"
	"github.com/orchestra-tui/orchestra-tui/wire/wiretest"
)

// A pane frame this engine pushes reads back the same through its client
// and through encoding/json (an older console's client), and its client
// reads what encoding/json writes (an older engine).
func TestPaneFramesReadBackTheSameEitherWay(t *testing.T) {
	t.Parallel()
	for _, f := range []paneFrame{
		{Task: "T1", Gone: true},
		{Task: "T1", Session: "s1", Cols: 3, Rows: 2, Lines: []string{"\x1b[31mab\x1b[m ", `"\ `}, X: 1, Y: 1, Cursor: true, Title: "t\"itle<&>", Version: 7, Text: "ab\n\"\\"},
		{Task: "T1", Session: "s1", Cols: 3, Rows: 2, Delta: true, Shift: 1, Set: []paneRow{{Y: 0, Line: "変 "}, {Y: 1, Line: "\x1b[1mx\x1b[m  "}}, Version: 8},
	} {
		wiretest.ReadsBackEitherWay(t, opPane, f)
	}
}

// A pane frame as the engine before this codec wrote it (its hand-written
// writer: HTML characters unescaped) reads as it did: a console of this
// version reads an engine of the one before, and the protocol's version
// stays.
func TestPaneFramesOfTheEngineBeforeReadTheSame(t *testing.T) {
	t.Parallel()
	old := `{"task":"T1","session":"s1","cols":6,"rows":2,"delta":true,"shift":1,"set":[{"y":1,"l":"\u001b[1m変更\u001b[m  "}],"x":3,"y":1,"cursor":true,"title":"<t&>","version":8}`
	var got paneFrame
	require.NoError(t, wire.ReadBody([]byte(old), &got))
	require.Equal(t, paneFrame{Task: "T1", Session: "s1", Cols: 6, Rows: 2, Delta: true, Shift: 1, Set: []paneRow{{Y: 1, Line: "\x1b[1m変更\x1b[m  "}}, X: 3, Y: 1, Cursor: true, Title: "<t&>", Version: 8}, got)
}
