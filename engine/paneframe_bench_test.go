package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// framePath is one way a changed screen takes from an emulator to a
// console's copy of the pane, run in one process with the engine's and
// the host's own code: the host's side over a socket pair
// (host.Loopback), then the engine's frame (frameOf, the watcher's
// changed rows) encoded as the watcher pushes it, decoded as the console's
// client reads it, and the rows a console draws taken from its copy.
type framePath struct {
	name string
	term *session.Terminal
	lb   *host.Loopback // nil: the session runs in the engine
	view session.View
	w    *watcher
	cl   *Client
	out  bytes.Buffer
	enc  *wire.Conn
	dec  *wire.Conn
	rows []string
	buf  []byte
	// engine to console, and host to engine, bytes so far
	wireBytes int64
}

const (
	benchCols, benchRows = 120, 40
	benchPane            = task.ID("01BENCHPANE")
)

// inProcess is the mode of a framePath whose session runs in the engine;
// the others are through a host of a host.LoopbackMode.
const inProcess = -1

// newFramePath makes a path through a host of mode (or in process); whole
// is a console that takes whole screens and their text (the way before
// rows).
func newFramePath(b testing.TB, name string, mode int, whole bool) *framePath {
	p := &framePath{name: name, term: session.NewTerminal(benchCols, benchRows, 0, nil)}
	p.view = p.term
	if mode != inProcess {
		lb, err := host.NewLoopback(p.term, host.LoopbackMode(mode))
		require.NoError(b, err)
		b.Cleanup(lb.Close)
		p.lb, p.view = lb, lb.View()
	}
	// The watcher of a console that takes changed rows, unless the path
	// is the whole screen each time (the way before rows).
	p.w = &watcher{rows: !whole, shift: !whole, sent: map[task.ID]sentPane{}}
	p.cl = &Client{panes: map[task.ID]*paneView{}}
	p.enc = wire.NewConn(&p.out)
	p.dec = wire.NewConn(&p.out)
	return p
}

// frame carries the screen's newest state to the console's copy, as one
// pane notice does.
func (p *framePath) frame(b testing.TB) {
	p.push(b)
	p.take(b)
}

// push encodes the frame the watcher sends for the screen's newest state.
func (p *framePath) push(b testing.TB) {
	if p.lb != nil {
		require.NoError(b, p.lb.Changed())
	}
	f := frameOf(benchPane, "s1", p.view, !p.w.rows, p.w.cache(benchPane))
	if p.w.rows {
		f = p.w.delta(f)
	}
	var err error
	p.buf, err = p.enc.PushBody(opPane, &f, p.buf)
	require.NoError(b, err)
	p.wireBytes += int64(p.out.Len())
}

// take decodes a pushed frame as the console's client does and reads the
// rows a console draws.
func (p *framePath) take(b testing.TB) {
	fr, err := p.dec.Recv()
	require.NoError(b, err)
	var pf paneFrame
	require.NoError(b, wire.ReadBody(fr.Body, &pf))
	p.cl.paneFrame(pf)
	v, _ := p.cl.Pane(benchPane)
	p.rows = v.(session.RowWriter).AppendRows(p.rows[:0], 0, benchRows, benchCols)
}

func (p *framePath) hostBytes() int64 {
	if p.lb == nil {
		return 0
	}
	s, r := p.lb.Bytes()
	return s + r
}

// benchLine is a line of an agent's output: colours, bold, a wide
// character, as Claude Code's tool output has them.
func benchLine(i int) string {
	return fmt.Sprintf("\x1b[32m✓\x1b[m \x1b[1mengine/watch.go\x1b[22m:%d \x1b[38;5;244m(%d ms)\x1b[m read the pane's rows and sent the changed ones · 変更 %d \x1b[34m%s\x1b[m",
		i, i%97, i, strings.Repeat("=", i%23))
}

// BenchmarkPaneFrame measures a changed pane-frame, from the emulator's
// change to the rows on the console's copy of the pane: in process (the
// session in the engine), through a session host, and through a host the
// way before the host offered rows (the whole rendered screen and its
// text from the host, cut again in the engine, every row and the text to
// the console). "scroll" prints a line per frame at the bottom of a full
// 120x40 screen, so every row changes; "status" rewrites one status line
// of a full screen, as an agent's spinner does. The paths run in
// alternating rounds; the figures are the medians of the rounds' ns per
// frame, their ratios (the host's to in process's) from the same rounds,
// and the bytes per frame on the engine's connection to the console and
// on the host's.
func BenchmarkPaneFrame(b *testing.B) {
	for _, wl := range []struct {
		name string
		step func(i int) string
	}{
		{"scroll", func(i int) string { return "\r\n" + benchLine(i) }},
		{"status", func(i int) string {
			return fmt.Sprintf("\x1b[%d;1H\x1b[2K\x1b[33m%c\x1b[m Working… (%ds · esc to interrupt)", benchRows, []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")[i%10], i)
		}},
	} {
		b.Run(wl.name, func(b *testing.B) { benchPaneFrame(b, wl.step) })
	}
}

func benchPaneFrame(b *testing.B, step func(int) string) {
	const rounds, frames = 9, 200
	paths := []*framePath{
		newFramePath(b, "inproc", inProcess, false),
		newFramePath(b, "host", int(host.LoopbackPush), false),
		newFramePath(b, "host-ask", int(host.LoopbackAsk), false),
		newFramePath(b, "host-whole", int(host.LoopbackWhole), true),
	}
	var fill strings.Builder
	for i := range benchRows {
		if i > 0 {
			fill.WriteString("\r\n")
		}
		fill.WriteString(benchLine(i))
	}
	for _, p := range paths {
		_, _ = p.term.Write([]byte(fill.String()))
		p.frame(b)
	}
	perFrame := map[string][]float64{}
	bytesPer := map[string]float64{}
	hostPer := map[string]float64{}
	n := 0
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			// Alternate which path goes first, so a machine that gets
			// busier through a round weighs on each the same.
			order := slices.Clone(paths)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, p := range order {
				w0, h0 := p.wireBytes, p.hostBytes()
				var spent time.Duration
				for k := range frames {
					_, _ = p.term.Write([]byte(step(n + k)))
					start := time.Now()
					p.frame(b)
					spent += time.Since(start)
				}
				perFrame[p.name] = append(perFrame[p.name], float64(spent.Nanoseconds())/frames)
				bytesPer[p.name] = float64(p.wireBytes-w0) / frames
				hostPer[p.name] = float64(p.hostBytes()-h0) / frames
			}
			n += frames
			// Every path shows what the emulator shows: its rows
			// exactly, or (the whole screen cut again in the engine,
			// its styles written another way) their text.
			want := paths[0].term.AppendRows(nil, 0, benchRows, benchCols)
			for _, p := range paths {
				if p.w.rows {
					require.Equal(b, want, p.rows, "the console's copy of the pane through %s", p.name)
				} else {
					require.Equal(b, session.RowsText(want), session.RowsText(p.rows), "the console's copy of the pane through %s", p.name)
				}
			}
		}
	}
	b.StopTimer()
	med := func(name string) float64 {
		s := slices.Clone(perFrame[name])
		slices.Sort(s)
		return s[len(s)/2]
	}
	in := med("inproc")
	b.ReportMetric(in, "inproc-ns/frame")
	b.ReportMetric(med("host"), "host-ns/frame")
	b.ReportMetric(med("host-ask"), "ask-ns/frame")
	b.ReportMetric(med("host-whole"), "whole-ns/frame")
	b.ReportMetric(med("host")/in, "host/inproc")
	b.ReportMetric(med("host-ask")/in, "ask/inproc")
	b.ReportMetric(med("host-whole")/in, "whole/inproc")
	b.ReportMetric(bytesPer["inproc"], "inproc-B/frame")
	b.ReportMetric(bytesPer["host"], "host-B/frame")
	b.ReportMetric(bytesPer["host-whole"], "whole-B/frame")
	b.ReportMetric(hostPer["host"], "host-hostB/frame")
	b.ReportMetric(hostPer["host-ask"], "ask-hostB/frame")
	b.ReportMetric(hostPer["host-whole"], "whole-hostB/frame")
}
