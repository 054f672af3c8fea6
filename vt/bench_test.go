package vt

import (
	"runtime"
	"strings"

	"fmt"
	uv "github.com/charmbracelet/ultraviolet"
	"os"
	"testing"
)

// BenchmarkIngest feeds the agent stream named by ORCHESTRA_BENCH_STREAM
// (bench/ingest.sh makes the shared 50 MiB one), or the committed 256 KiB
// slice, in 4 KiB writes as the session's reader would.
func BenchmarkIngest(b *testing.B) {
	path := os.Getenv("ORCHESTRA_BENCH_STREAM")
	if path == "" {
		path = "testdata/agentstream-256k.bin"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range [][2]int{{120, 40}, {240, 60}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				term := New(size[0], size[1], DefaultHistory, nil)
				feed(term, data, 4096)
			}
		})
	}
}

// BenchmarkIngestSteady measures a terminal whose history is already full,
// as a long-running pane's is: the allocations it reports are per pass of
// the stream, the steady state the ingest goal is about.
func BenchmarkIngestSteady(b *testing.B) {
	path := os.Getenv("ORCHESTRA_BENCH_STREAM")
	if path == "" {
		path = "testdata/agentstream-256k.bin"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range [][2]int{{120, 40}, {240, 60}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			term := New(size[0], size[1], DefaultHistory, nil)
			feed(term, data, 4096)
			if len(data) < 8<<20 {
				for range 3 { // fill the history from the short slice too
					feed(term, data, 4096)
				}
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				feed(term, data, 4096)
			}
			b.StopTimer()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
		})
	}
}

// BenchmarkGridFrame draws a 200x50 frame of 16 panes (4x4, one column and
// one row of border between them) where every pane changed since the last
// frame. "cells" paints each pane straight into the frame's cell buffer;
// "rows" builds the frame as text from pane-width rows, as the console's
// string frame does, and includes parsing that text into cells, which
// bubbletea does with every frame.
func BenchmarkGridFrame(b *testing.B) {
	data, err := os.ReadFile("testdata/agentstream-256k.bin")
	if err != nil {
		b.Fatal(err)
	}
	const W, H, n = 200, 50, 4
	cw, ch := (W-(n-1))/n, (H-(n-1))/n
	panes := make([]*Terminal, n*n)
	for i := range panes {
		panes[i] = New(cw, ch, DefaultHistory, nil)
		feed(panes[i], data[i*8000:], 4096)
	}
	chunk := 0
	change := func() {
		for i, p := range panes {
			off := (chunk*512 + i*4000) % (len(data) - 512)
			_, _ = p.Write(data[off : off+512])
		}
		chunk++
	}
	b.Run("cells", func(b *testing.B) {
		buf := uv.NewScreenBuffer(W, H)
		b.ReportAllocs()
		for b.Loop() {
			change()
			for i, p := range panes {
				x, y := (i%n)*(cw+1), (i/n)*(ch+1)
				p.Draw(buf, uv.Rect(x, y, cw, ch))
			}
		}
	})
	b.Run("rows", func(b *testing.B) {
		buf := uv.NewScreenBuffer(W, H)
		var row []byte
		b.ReportAllocs()
		for b.Loop() {
			change()
			var frame strings.Builder
			for r := range n {
				for y := range ch {
					for c := range n {
						if c > 0 {
							frame.WriteString("│")
						}
						row = panes[r*n+c].AppendRow(row[:0], y, cw)
						frame.Write(row)
					}
					frame.WriteByte('\n')
				}
				frame.WriteString(strings.Repeat("─", W) + "\n")
			}
			uv.NewStyledString(frame.String()).Draw(buf, buf.Bounds())
		}
	})
}
