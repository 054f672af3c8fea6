package session

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The references bench/ingest.sh measures the emulator against, in the
// same run: a detached tmux pane ingesting the same stream, and a tmux
// server holding the same output as eight panes.

// tmuxServer starts a tmux server on a private socket with the pane
// history the console keeps, and returns a function running tmux commands
// on it. The server is killed when the benchmark ends.
func tmuxServer(b *testing.B) func(args ...string) string {
	b.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux is not installed")
	}
	dir := b.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g history-limit 10000\nset -g status off\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	sock := fmt.Sprintf("bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	tm := func(args ...string) string {
		cmd := exec.Command("tmux", append([]string{"-L", sock, "-f", conf}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	b.Cleanup(func() {
		cmd := exec.Command("tmux", "-L", sock, "kill-server")
		_ = cmd.Run()
	})
	return tm
}

// BenchmarkTmuxIngest is the tmux reference: a detached pane of the same
// size cats the stream; the clock stops when tmux has read it all (the
// pane signals a wait-for channel after cat).
func BenchmarkTmuxIngest(b *testing.B) {
	path, data := benchStream(b)
	for _, size := range [][2]int{{120, 40}, {240, 60}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; b.Loop(); i++ {
				tm := tmuxServer(b)
				ch := fmt.Sprintf("done%d", i)
				tm("new-session", "-d", "-x", strconv.Itoa(size[0]), "-y", strconv.Itoa(size[1]),
					"sh", "-c", fmt.Sprintf("cat %q; tmux wait-for -S %s; exec sleep 100000", path, ch))
				tm("wait-for", ch)
				tm("kill-server")
			}
		})
	}
}

// memSlices cuts eight 3 MB slices of the stream at line ends.
func memSlices(b *testing.B, data []byte) [][]byte {
	const size = 3 << 20
	if len(data) < 8*size+size {
		b.Skip("the stream is shorter than 27 MB")
	}
	var out [][]byte
	off := 0
	for range 8 {
		end := off + size
		end += bytes.Index(data[end:], []byte("\r\n")) + 2
		out = append(out, data[off:end])
		off = end
	}
	return out
}

// rssKiB reads a process's resident set size from /proc.
func rssKiB(b *testing.B, pid int) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return kb
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkPaneMemory holds eight 120x40 terminals that each printed 3 MB
// (history 10,000 lines) and reports the process's resident memory after a
// collection: "MiB-rss" in all, "MiB-panes" added by the panes, and the
// live heap. Run it in a process of its own (bench/ingest.sh does).
func BenchmarkPaneMemory(b *testing.B) {
	_, data := benchStream(b)
	slices := memSlices(b, data)
	// Keep only the slices, so the 50 MiB stream is not counted.
	for i := range slices {
		slices[i] = bytes.Clone(slices[i])
	}
	data = nil
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		before := rssKiB(b, os.Getpid())
		terms := make([]*Terminal, len(slices))
		for i, s := range slices {
			terms[i] = NewTerminal(120, 40, 0, nil)
			for off := 0; off < len(s); off += 4096 {
				_, _ = terms[i].Write(s[off:min(off+4096, len(s))])
			}
		}
		runtime.GC()
		debug.FreeOSMemory()
		after := rssKiB(b, os.Getpid())
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(after/1024, "MiB-rss")
		b.ReportMetric((after-before)/1024, "MiB-panes")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap")
		runtime.KeepAlive(terms)
	}
}

// BenchmarkTmuxMemory is the reference: a tmux server with eight 120x40
// panes (history-limit 10000) that each printed the same 3 MB, reported as
// the server's resident memory.
func BenchmarkTmuxMemory(b *testing.B) {
	_, data := benchStream(b)
	slices := memSlices(b, data)
	dir := b.TempDir()
	for b.Loop() {
		tm := tmuxServer(b)
		for i, s := range slices {
			f := filepath.Join(dir, fmt.Sprintf("slice%d", i))
			if err := os.WriteFile(f, s, 0o600); err != nil {
				b.Fatal(err)
			}
			script := fmt.Sprintf("cat %q; tmux wait-for -S done%d; exec sleep 100000", f, i)
			if i == 0 {
				tm("new-session", "-d", "-x", "120", "-y", "40", "sh", "-c", script)
			} else {
				tm("new-window", "-d", "sh", "-c", script)
			}
		}
		for i := range slices {
			tm("wait-for", fmt.Sprintf("done%d", i))
		}
		pid, err := strconv.Atoi(strings.TrimSpace(tm("display", "-p", "#{pid}")))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rssKiB(b, pid)/1024, "MiB-rss")
		tm("kill-server")
	}
}
