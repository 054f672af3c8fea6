package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// benchStream loads the agent stream named by ORCHESTRA_BENCH_STREAM
// (bench/ingest.sh makes one), or skips.
func benchStream(b *testing.B) (string, []byte) {
	b.Helper()
	path := os.Getenv("ORCHESTRA_BENCH_STREAM")
	if path == "" {
		b.Skip("ORCHESTRA_BENCH_STREAM is not set; run bench/ingest.sh, which generates the stream and sets it")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("read bench stream: %v", err)
	}
	return path, data
}

// BenchmarkEmulatorIngest feeds the agent stream to the emulator in 4 KiB
// chunks, as the session's reader would.
func BenchmarkEmulatorIngest(b *testing.B) {
	_, data := benchStream(b)
	for _, size := range [][2]int{{120, 40}, {240, 60}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				term := newTerminal(size[0], size[1], 0, nil)
				for off := 0; off < len(data); off += 4096 {
					_, _ = term.Write(data[off:min(off+4096, len(data))])
				}
				_ = term.Close()
			}
		})
	}
}

// BenchmarkRawPtyRead is the reference: cat of the same stream under a pty,
// read in 32 KiB reads and thrown away.
func BenchmarkRawPtyRead(b *testing.B) {
	path, data := benchStream(b)
	b.SetBytes(int64(len(data)))
	buf := make([]byte, 32<<10)
	for b.Loop() {
		cmd := exec.Command("cat", path)
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := f.Read(buf); err != nil {
				break
			}
		}
		_ = f.Close()
		_ = cmd.Wait()
	}
}

// BenchmarkCastWrite measures the recording alone, flushed per event as the
// session does, on 4 KiB chunks.
func BenchmarkCastWrite(b *testing.B) {
	chunk := bytes.Repeat([]byte("internal/pkg/file.go:12:3: \x1b[1;31merror:\x1b[0m café 日本語 ✓\r\n"), 64)[:4096]
	c, err := createCast(filepath.Join(b.TempDir(), "b.cast"), 120, 40, nil, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		c.event("o", chunk)
	}
	_ = c.Close()
}

// BenchmarkPtyToScreenLatency measures the time from writing a marker into
// a program (cat, whose terminal echoes it) to the marker showing in the
// session's screen text, waking on Changed.
func BenchmarkPtyToScreenLatency(b *testing.B) {
	dir := b.TempDir()
	s, err := Start(Params{
		Spec: Spec{Name: "cat", Argv: []string{"/bin/cat"}, Delivery: DeliveryType, Ready: `.`},
		Dir:  dir, Cols: 120, Rows: 40, Environ: []string{"PATH=/usr/bin:/bin"},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Stop(time.Second) }()
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		marker := fmt.Sprintf("mark%07d", i)
		start := time.Now()
		if err := s.Write([]byte(marker + "\r")); err != nil {
			b.Fatal(err)
		}
		for !strings.Contains(s.View().Text(), marker) {
			select {
			case <-s.Changed():
			case <-s.Done():
				b.Fatal(errors.New("cat exited"))
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "µs-median")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "µs-p99")
}
