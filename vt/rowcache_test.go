package vt

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func rowsOf(t *Terminal, w int) []string {
	var out []string
	for y := range t.rows {
		out = append(out, string(t.AppendRow(nil, y, w)))
	}
	return out
}

// The cached rows are the rows AppendRow writes, through scrolls, a
// status line, the alternate screen, a resize, a region's scroll and a
// style compaction, and a row whose cells did not change is not written
// again.
func TestARowCacheWritesWhatAppendRowWrites(t *testing.T) {
	term := New(30, 6, 100, nil)
	var c RowCache
	check := func(what string) []string {
		t.Helper()
		got := c.AppendRows(term, nil, 0, term.rows, term.cols)
		require.Equal(t, rowsOf(term, term.cols), got, what)
		return got
	}
	for i := range 10 {
		_, _ = fmt.Fprintf(term, "\x1b[3%dmline %d\x1b[m 変更\r\n", i%8, i)
	}
	before := check("after scrolling")
	_, _ = term.Write([]byte("\r\nnext"))
	after := check("one more line")
	// The rows that moved are the same strings, not written again.
	for y := 0; y < len(after)-2; y++ {
		require.Equal(t, before[y+1], after[y])
		require.True(t, unsafeSame(before[y+1], after[y]), "row %d moved, not rewritten", y)
	}
	_, _ = term.Write([]byte("\x1b[6;1H\x1b[2K\x1b[33m⠋\x1b[m Working"))
	check("a status line")
	_, _ = term.Write([]byte("\x1b[?1049h\x1b[2;1Halt screen"))
	check("the alternate screen")
	_, _ = term.Write([]byte("\x1b[?1049l"))
	check("back")
	_, _ = term.Write([]byte("\x1b[2;4r\x1b[4;1H\nregion\x1b[r"))
	check("a region scrolled")
	term.Resize(20, 4)
	check("resized")
	require.Equal(t, rowsOf(term, 10), c.AppendRows(term, nil, 0, term.rows, 10), "another width")
	// Enough new colours to compact the style table: every row is
	// written again with the new ids.
	n := term.compactions
	for i := 0; term.compactions == n; i++ {
		_, _ = fmt.Fprintf(term, "\x1b[38;2;%d;%d;%dmx", i&255, (i>>8)&255, (i>>16)&255)
	}
	check("after a compaction")
}

// unsafeSame reports whether a and b are one string in memory.
func unsafeSame(a, b string) bool {
	return len(a) > 0 && len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
