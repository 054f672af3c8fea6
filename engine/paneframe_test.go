package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// lastFrame decodes the frame a path pushed, leaving it to be taken.
func lastFrame(t *testing.T, p *framePath) paneFrame {
	t.Helper()
	var f paneFrame
	b := p.out.Bytes()
	var fr struct {
		Body json.RawMessage `json:"body"`
	}
	require.NoError(t, json.Unmarshal(b, &fr))
	require.NoError(t, json.Unmarshal(fr.Body, &f))
	return f
}

func TestAPaneFrameCarriesEachChangedRowOnceAndNoText(t *testing.T) {
	t.Parallel()
	for _, mode := range []int{inProcess, int(host.LoopbackPush), int(host.LoopbackAsk)} {
		p := newFramePath(t, "rows", mode, false)
		_, _ = p.term.Write([]byte("\x1b[32mfirst\x1b[m line\r\nsecond 変更\r\n"))
		p.push(t)
		f := lastFrame(t, p)
		require.False(t, f.Delta, "the first frame of a session is whole")
		require.Len(t, f.Lines, benchRows)
		require.Empty(t, f.Text, "no text unless asked")
		p.take(t)

		_, _ = p.term.Write([]byte("\x1b[40;1H\x1b[33m⠋\x1b[m Working"))
		p.push(t)
		f = lastFrame(t, p)
		require.True(t, f.Delta)
		require.Empty(t, f.Lines)
		require.Empty(t, f.Text)
		require.Len(t, f.Set, 1, "one row changed")
		require.Equal(t, benchRows-1, f.Set[0].Y)
		p.take(t)
		require.Equal(t, p.term.AppendRows(nil, 0, benchRows, benchCols), p.rows)
		v, ok := p.cl.Pane(benchPane)
		require.True(t, ok)
		require.Equal(t, p.term.Text(), v.Text(), "the console's text is taken from the rows")

		// Nothing changed: the frame carries no row.
		p.push(t)
		require.Empty(t, lastFrame(t, p).Set)
		p.take(t)
		require.Equal(t, p.term.AppendRows(nil, 0, benchRows, benchCols), p.rows)
	}
}

// A console of this version that attached to an engine that sends whole
// screens and their text (an engine older than watchReq.Rows), and an
// older console of this engine, read whole frames.
func TestWholePaneFramesStillRead(t *testing.T) {
	t.Parallel()
	p := newFramePath(t, "whole", inProcess, true)
	_, _ = p.term.Write([]byte("\x1b[31mred\x1b[m\r\nplain"))
	p.push(t)
	f := lastFrame(t, p)
	require.False(t, f.Delta)
	require.Equal(t, p.term.Text(), f.Text)
	p.take(t)
	_, _ = p.term.Write([]byte(" more"))
	p.push(t)
	require.Len(t, lastFrame(t, p).Lines, benchRows)
	p.take(t)
	require.Equal(t, p.term.AppendRows(nil, 0, benchRows, benchCols), p.rows)
	v, _ := p.cl.Pane(benchPane)
	require.Equal(t, p.term.Text(), v.Text())
	require.Equal(t, session.RowsText(p.rows), v.Text())
}

// A console that takes rows but not shifts (a console older than
// watchReq.Shift) gets a scroll as every row changed; one that takes
// shifts gets the row that came in.
func TestAScrollIsAShiftOnlyForAConsoleThatTakesIt(t *testing.T) {
	t.Parallel()
	for _, shift := range []bool{false, true} {
		p := newFramePath(t, "rows", inProcess, false)
		p.w.shift = shift
		var fill string
		for i := range benchRows {
			fill += "\r\n" + benchLine(i)
		}
		_, _ = p.term.Write([]byte(fill))
		p.frame(t)
		_, _ = p.term.Write([]byte("\r\n" + benchLine(99)))
		p.push(t)
		f := lastFrame(t, p)
		require.True(t, f.Delta)
		if shift {
			require.Equal(t, 1, f.Shift)
			require.Len(t, f.Set, 1)
			require.Equal(t, benchRows-1, f.Set[0].Y)
		} else {
			require.Zero(t, f.Shift)
			require.Len(t, f.Set, benchRows)
		}
		p.take(t)
		require.Equal(t, p.term.AppendRows(nil, 0, benchRows, benchCols), p.rows)
	}
}
