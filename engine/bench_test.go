package engine

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/sched"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// benchSessions is how many live sessions the benchmarks run.
const benchSessions = 16

// idleEngine starts an engine with n live sessions of `cat` at a prompt,
// each having echoed its brief, and returns it once every brief is in.
func idleEngine(b *testing.B, n int) (*Engine, []task.ID) {
	b.Helper()
	return idleEngineWith(b, n, false)
}

// idleEngineWith is idleEngine; with hosts set each session runs in a
// session host (this test binary run as `host`), as in the background
// engine.
func idleEngineWith(b *testing.B, n int, hosts bool) (*Engine, []task.ID) {
	b.Helper()
	return idleEngineRun(b, n, hosts, "echo READY; exec cat")
}

// idleEngineRun is idleEngineWith with each agent running script in sh
// (it must print READY). ORCHESTRA_HOST_BIN names the binary that runs
// the hosts (the real orchestra-tui, whose package init a host pays);
// unset, this test binary does.
func idleEngineRun(b *testing.B, n int, hosts bool, script string) (*Engine, []task.ID) {
	b.Helper()
	root := b.TempDir()
	require.NoError(b, project.WriteProject(root))
	spec := session.Spec{Name: "cat", Argv: []string{"sh", "-c", script}, Env: []string{"PATH", "HOME"},
		Delivery: "type", Submit: "\r", Ready: "READY", Quiet: session.Duration{Duration: 100 * time.Millisecond}}
	e, err := Start(context.Background(), Params{Dir: root, Version: "bench", Log: log.New(io.Discard, "", 0), Open: func(dir string) (*coord.Opened, error) {
		var start worker.Starter
		var hs coord.Hosts
		if hosts {
			self, err := os.Executable()
			if err != nil {
				return nil, err
			}
			if bin := os.Getenv("ORCHESTRA_HOST_BIN"); bin != "" {
				self = bin
			}
			l := host.Launcher{Self: self, Root: dir, Version: "bench"}
			start, hs = l.Starter(), SessionHosts(l)
		}
		return coord.Open(coord.OpenParams{Dir: dir, Settle: 30 * time.Millisecond, SampleEvery: time.Second, Start: start, Hosts: hs,
			Tweak: func(c *config.Config) {
				c.Harness["cat"] = spec
				c.Slots = []config.Slot{{Name: "cat", Harness: "cat", Capacity: n}}
			}})
	}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = e.Stop() })
	ch, unsub := e.Subscribe()
	defer unsub()
	var ids []task.ID
	for i := range n {
		res, err := e.Do(context.Background(), coord.Command{Kind: coord.CmdAdd, Task: &task.Task{
			Title: fmt.Sprintf("idle %d", i+1), Goal: "sit", Verify: "true", Harness: "cat", Pipeline: task.Pipeline{task.PhaseImplement},
		}})
		require.NoError(b, err)
		ids = append(ids, res.TaskID)
	}
	delivered := 0
	deadline := time.After(120 * time.Second)
	for delivered < n {
		select {
		case no := <-ch:
			if no.Event != nil && no.Event.Kind == task.EvBriefDelivered {
				delivered++
			}
		case <-deadline:
			b.Fatalf("only %d of %d sessions came up", delivered, n)
		}
	}
	return e, ids
}

// BenchmarkAttach measures a console's attach with 16 live sessions: from
// dialling the socket to holding the snapshot and every pane's screen, the
// first full frame's data.
func BenchmarkAttach(b *testing.B) { benchAttach(b, false) }

// BenchmarkAttachHosts is BenchmarkAttach with every session in a host:
// each pane's first screen comes from its host through the engine.
func BenchmarkAttachHosts(b *testing.B) { benchAttach(b, true) }

func benchAttach(b *testing.B, hosts bool) {
	e, ids := idleEngineWith(b, benchSessions, hosts)
	b.ResetTimer()
	for range b.N {
		cl, err := Dial(context.Background(), e.Paths.Socket, Options{Watch: true, Version: "bench", Kind: "console"})
		require.NoError(b, err)
		b.StopTimer()
		for _, id := range ids {
			if _, ok := cl.Pane(id); !ok {
				b.Fatalf("pane of %s missing after attach", id)
			}
		}
		cl.Close()
		b.StartTimer()
	}
}

// BenchmarkKeyLatency measures a key typed in focus mode through the
// console's client: "ack" is the call's return (the engine wrote it to the
// agent's pty, where the agent reads it); "echo" is until the agent's echo
// is on the client's copy of the pane (the whole loop back to the console).
// Keys are two frames apart, a fast typist's pace.
func BenchmarkKeyLatency(b *testing.B) { benchKeyLatency(b, false) }

// BenchmarkKeyLatencyHosts is BenchmarkKeyLatency with every session in a
// host: console → engine → host → the agent's pty, and the echo back.
func BenchmarkKeyLatencyHosts(b *testing.B) { benchKeyLatency(b, true) }

func benchKeyLatency(b *testing.B, hosts bool) {
	if hosts {
		// As the background engine does (its console too): its hosts
		// ask for the same themselves.
		require.NoError(b, sched.ShortSlice())
	}
	e, ids := idleEngineWith(b, benchSessions, hosts)
	cl, err := Dial(context.Background(), e.Paths.Socket, Options{Watch: true, Version: "bench", Kind: "console"})
	require.NoError(b, err)
	defer cl.Close()
	ch, unsub := cl.Subscribe()
	defer unsub()
	id := ids[0]
	acks := make([]time.Duration, 0, b.N)
	echoes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		key := string(rune('a' + i%26))
		start := time.Now()
		require.NoError(b, cl.Input(id, []byte(key)))
		acks = append(acks, time.Since(start))
		want := key
		for {
			v, ok := cl.Pane(id)
			if ok && lastLineEndsWith(v.Text(), want) {
				break
			}
			<-ch
		}
		echoes = append(echoes, time.Since(start))
		b.StopTimer()
		if i%40 == 39 {
			require.NoError(b, cl.Input(id, []byte("\r")))
		}
		// A person types a key every 100 ms or so; keys closer than a
		// frame would measure the frame cap, not the path.
		pace := time.NewTimer(2 * frameEvery)
		<-pace.C
		b.StartTimer()
	}
	b.StopTimer()
	report(b, "ack", acks)
	report(b, "echo", echoes)
}

// BenchmarkSocketRoundTrip is the reference for BenchmarkKeyLatencyHosts:
// one byte to another process over a unix socket and back, at the same
// pace, both processes asking for the short slice as engine and host do.
// That is the two wakeups of a process a key costs between engine and
// host, with none of our code: whatever its tail is, the machine's load
// put there.
func BenchmarkSocketRoundTrip(b *testing.B) {
	require.NoError(b, sched.ShortSlice())
	path := filepath.Join(b.TempDir(), "echo.sock")
	ln, err := wire.Listen(path)
	require.NoError(b, err)
	defer ln.Close()
	self, err := os.Executable()
	require.NoError(b, err)
	cmd := exec.Command(self, "echo", path)
	require.NoError(b, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	c, err := ln.Accept()
	require.NoError(b, err)
	defer c.Close()
	one := []byte{'k'}
	rts := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		_, err := c.Write(one)
		require.NoError(b, err)
		_, err = io.ReadFull(c, one)
		require.NoError(b, err)
		rts = append(rts, time.Since(start))
		b.StopTimer()
		pace := time.NewTimer(2 * frameEvery)
		<-pace.C
		b.StartTimer()
	}
	b.StopTimer()
	report(b, "rt", rts)
}

// echoMain is the other end of BenchmarkSocketRoundTrip: it sends back
// every byte it reads from the socket at path.
func echoMain(path string) int {
	if err := sched.ShortSlice(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	c, err := wire.Dial(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	buf := make([]byte, 1)
	for {
		if _, err := c.Read(buf); err != nil {
			return 0
		}
		if _, err := c.Write(buf); err != nil {
			return 0
		}
	}
}

func lastLineEndsWith(text, s string) bool {
	lines := strings.Split(strings.TrimRight(text, "\n "), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimRight(lines[i], " "); l != "" {
			return strings.HasSuffix(l, s)
		}
	}
	return false
}

func report(b *testing.B, name string, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	p := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.5), name+"-p50-ms")
	b.ReportMetric(p(0.99), name+"-p99-ms")
}

// idleWindow is how long an idle CPU benchmark measures: long enough for
// the samplers' slowest idle pace (a worktree fingerprint a minute) to
// show in the figure.
const idleWindow = 60 * time.Second

// BenchmarkIdleCPU measures the engine's own CPU, in percent of one core,
// while 16 sessions sit idle and one console watches, over idleWindow,
// the programs it runs meanwhile (git) included. The engine runs in the
// test process, which does nothing else meanwhile.
func BenchmarkIdleCPU(b *testing.B) {
	e, _ := idleEngine(b, benchSessions)
	cl, err := Dial(context.Background(), e.Paths.Socket, Options{Watch: true, Version: "bench", Kind: "console"})
	require.NoError(b, err)
	defer cl.Close()
	b.ResetTimer()
	for range b.N {
		u0, c0 := cpuNow(), childCPU()
		start := time.Now()
		t := time.NewTimer(idleWindow)
		<-t.C
		used, cused := cpuNow()-u0, childCPU()-c0
		el := time.Since(start).Seconds()
		b.ReportMetric(100*(used+cused).Seconds()/el, "%cpu")
		b.ReportMetric(100*cused.Seconds()/el, "children-%cpu")
	}
}

func cpuNow() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// childCPU is the CPU of the children this process has waited for: the
// programs the engine ran (git), not the session hosts and agents, which
// are still running.
func childCPU() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleCPUHosts measures, over idleWindow, the CPU of the engine
// (with the programs it ran meanwhile, git) plus its 16 session hosts, in
// percent of one core, while every session sits idle and one console
// watches (the agents, `cat`, are not counted: they are the same either
// way).
func BenchmarkIdleCPUHosts(b *testing.B) {
	e, _ := idleEngineWith(b, benchSessions, true)
	cl, err := Dial(context.Background(), e.Paths.Socket, Options{Watch: true, Version: "bench", Kind: "console"})
	require.NoError(b, err)
	defer cl.Close()
	hosts := hostPids(b)
	require.Len(b, hosts, benchSessions)
	require.Positive(b, procCPU(b, hosts), "the hosts' CPU time cannot be read")
	b.ResetTimer()
	for range b.N {
		u0, c0, h0 := cpuNow(), childCPU(), procCPU(b, hosts)
		start := time.Now()
		t := time.NewTimer(idleWindow)
		<-t.C
		used, cused, hused := cpuNow()-u0, childCPU()-c0, procCPU(b, hosts)-h0
		el := time.Since(start).Seconds()
		b.ReportMetric(100*(used+cused+hused).Seconds()/el, "%cpu")
		b.ReportMetric(100*(used+cused).Seconds()/el, "engine-%cpu")
		b.ReportMetric(100*cused.Seconds()/el, "children-%cpu")
		b.ReportMetric(100*hused.Seconds()/el, "hosts-%cpu")
	}
}

// BenchmarkHostRSS reports the resident memory of a session host (VmRSS),
// the median of 16 idle hosts whose screens are 80x24 with the default
// scrollback.
func BenchmarkHostRSS(b *testing.B) {
	idleEngineWith(b, benchSessions, true)
	hosts := hostPids(b)
	require.Len(b, hosts, benchSessions)
	b.ResetTimer()
	for range b.N {
		var kb []float64
		for _, pid := range hosts {
			kb = append(kb, float64(rssKB(b, pid)))
		}
		sort.Float64s(kb)
		b.ReportMetric(kb[len(kb)/2], "rss-kB/host")
		b.ReportMetric(kb[len(kb)-1], "max-rss-kB/host")
	}
}

// hostPids lists this process's children that are session hosts.
func hostPids(b *testing.B) []int {
	b.Helper()
	return childPids(b, os.Getpid())
}

// procCPU sums the CPU time of every thread of pids, in nanoseconds
// (/proc/PID/task/TID/schedstat's first field: clock ticks would round an
// idle host's few microseconds to nothing).
func procCPU(b *testing.B, pids []int) time.Duration {
	b.Helper()
	var ns int64
	for _, pid := range pids {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		require.NoError(b, err)
		for _, t := range tasks {
			st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/schedstat")
			if err != nil {
				continue // a thread that just ended
			}
			if f := strings.Fields(string(st)); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				ns += n
			}
		}
	}
	return time.Duration(ns)
}

// rssKB reads VmRSS from /proc/PID/status.
func rssKB(b *testing.B, pid int) int {
	b.Helper()
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(b, err)
	for line := range strings.SplitSeq(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatalf("no VmRSS for %d", pid)
	return 0
}
