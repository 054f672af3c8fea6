package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A pane frame written by pushPane reads back the same through readPane
// and through encoding/json (an older console's client), and readPane
// reads what encoding/json writes (an older engine).
func TestPaneFramesReadBackTheSameEitherWay(t *testing.T) {
	t.Parallel()
	for _, f := range []paneFrame{
		{Task: "T1", Gone: true},
		{Task: "T1", Session: "s1", Cols: 3, Rows: 2, Lines: []string{"\x1b[31mab\x1b[m ", `"\ `}, X: 1, Y: 1, Cursor: true, Title: "t\"itle", Version: 7, Text: "ab\n\"\\"},
		{Task: "T1", Session: "s1", Cols: 3, Rows: 2, Delta: true, Shift: 1, Set: []paneRow{{Y: 0, Line: "変 "}, {Y: 1, Line: "\x1b[1mx\x1b[m  "}}, Version: 8},
	} {
		b := appendPaneFrame(nil, &f)
		var viaJSON paneFrame
		require.NoError(t, json.Unmarshal(b, &viaJSON), "%s", b)
		require.Equal(t, f, viaJSON)
		got, err := readPane(b)
		require.NoError(t, err)
		require.Equal(t, f, got)
		std, err := json.Marshal(f)
		require.NoError(t, err)
		got, err = readPane(std)
		require.NoError(t, err)
		require.Equal(t, f, got)
	}
}
