package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/vt"
)

// BenchmarkMemoryVsTmux compares, by PSS (/proc/PID/smaps_rollup), what
// eight panes that each printed 3 MB cost here (the engine, its eight
// session hosts, and with ORCHESTRA_HOST_BIN set a console attached at
// 200x50) against a tmux server holding the same eight panes with the
// same history limit, measured in the same round once both sides sat
// idle (hostsSettle). With ORCHESTRA_HOST_BIN the engine, the hosts and
// the console are all that binary, as an operator runs them
// (realEngine); without it the engine is this test process and there is
// no console. The agents (`cat`) are counted on neither side.
// bench/memory.sh runs it with the real binary.
func BenchmarkMemoryVsTmux(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("needs tmux")
	}
	const n = 8
	dir := b.TempDir()
	out := filepath.Join(dir, "out.txt")
	var text strings.Builder
	for i := 0; text.Len() < 3_000_000; i++ {
		fmt.Fprintf(&text, "\x1b[32m%06d\x1b[m \x1b[1mbuild\x1b[22m step %d of the agent's output, a line of plain words and \x1b[34mcolour\x1b[m\n", i, i)
	}
	text.WriteString("END-OF-PANE\n")
	require.NoError(b, os.WriteFile(out, []byte(text.String()), 0o644))

	bin := os.Getenv("ORCHESTRA_HOST_BIN")
	script := "cat " + out + "; echo READY; exec cat"
	var root string
	var enginePid int
	var hosts []int
	if bin != "" {
		root, enginePid, hosts = realEngine(b, bin, n, script)
	} else {
		idleEngineRun(b, n, true, script)
		enginePid, hosts = os.Getpid(), hostPids(b)
	}
	require.Len(b, hosts, n)

	tm := func(sock string, args ...string) string {
		o, err := exec.Command("tmux", append([]string{"-L", sock, "-f", filepath.Join(dir, "tmux.conf")}, args...)...).CombinedOutput()
		require.NoError(b, err, "tmux %v: %s", args, o)
		return strings.TrimSpace(string(o))
	}
	require.NoError(b, os.WriteFile(filepath.Join(dir, "tmux.conf"), fmt.Appendf(nil, "set -g history-limit %d\nset -g status off\n", vt.DefaultHistory), 0o644))
	sock := "orch-mem-" + strconv.Itoa(os.Getpid())
	b.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })
	tm(sock, "new-session", "-d", "-x", "80", "-y", "24", "cat "+out+"; exec cat")
	for range n - 1 {
		tm(sock, "new-window", "cat "+out+"; exec cat")
	}
	waitFor(b, func() bool {
		for w := range n {
			if !strings.Contains(tm(sock, "capture-pane", "-p", "-t", ":"+strconv.Itoa(w)), "END-OF-PANE") {
				return false
			}
		}
		return true
	})
	tmuxPid, err := strconv.Atoi(tm(sock, "display", "-p", "#{pid}"))
	require.NoError(b, err)

	console := 0
	if bin != "" {
		csock := sock + "-console"
		b.Cleanup(func() { _ = exec.Command("tmux", "-L", csock, "kill-server").Run() })
		tm(csock, "new-session", "-d", "-x", "200", "-y", "50", bin+" --no-anim -C "+root)
		waitFor(b, func() bool { return strings.Contains(tm(csock, "capture-pane", "-p"), "idle 8") })
		pid, err := strconv.Atoi(tm(csock, "display", "-p", "#{pane_pid}"))
		require.NoError(b, err)
		console = pid
	}
	settle()
	b.ResetTimer()
	for range b.N {
		kb := func(pid int) float64 { return float64(smapsRollup(b, pid)["Pss"]) }
		engine := kb(enginePid)
		var hs float64
		for _, pid := range hosts {
			hs += kb(pid)
		}
		cons := 0.0
		if console != 0 {
			cons = kb(console)
		}
		t := kb(tmuxPid)
		b.ReportMetric(engine/1024, "engine-pss-MiB")
		b.ReportMetric(hs/1024, "hosts-pss-MiB")
		b.ReportMetric(cons/1024, "console-pss-MiB")
		b.ReportMetric((engine+hs+cons)/1024, "ours-pss-MiB")
		b.ReportMetric(t/1024, "tmux-pss-MiB")
		b.ReportMetric((engine+hs+cons)/t, "ours/tmux")
	}
}

// waitFor polls a condition of another program (tmux) for up to 2 min.
func waitFor(b *testing.B, ok func() bool) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			b.Fatal("timed out")
		}
		t := time.NewTimer(100 * time.Millisecond)
		<-t.C
	}
}
