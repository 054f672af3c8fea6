package engine

import (
	"context"
	"fmt"
	"io"
	"log"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// benchSessions is how many live sessions the benchmarks run.
const benchSessions = 16

// idleEngine starts an engine with n live sessions of `cat` at a prompt,
// each having echoed its brief, and returns it once every brief is in.
func idleEngine(b *testing.B, n int) (*Engine, []task.ID) {
	b.Helper()
	root := b.TempDir()
	require.NoError(b, project.WriteProject(root))
	spec := session.Spec{Name: "cat", Argv: []string{"sh", "-c", "echo READY; exec cat"}, Env: []string{"PATH", "HOME"},
		Delivery: "type", Submit: "\r", Ready: "READY", Quiet: session.Duration{Duration: 100 * time.Millisecond}}
	e, err := Start(context.Background(), Params{Dir: root, Version: "bench", Log: log.New(io.Discard, "", 0), Open: func(dir string) (*coord.Opened, error) {
		return coord.Open(coord.OpenParams{Dir: dir, Settle: 30 * time.Millisecond, SampleEvery: time.Second,
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
func BenchmarkAttach(b *testing.B) {
	e, ids := idleEngine(b, benchSessions)
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
func BenchmarkKeyLatency(b *testing.B) {
	e, ids := idleEngine(b, benchSessions)
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

// BenchmarkIdleCPU measures the engine's own CPU, in percent of one core,
// while 16 sessions sit idle and one console watches, over a 5 s window.
// The engine runs in the test process, which does nothing else meanwhile.
func BenchmarkIdleCPU(b *testing.B) {
	e, _ := idleEngine(b, benchSessions)
	cl, err := Dial(context.Background(), e.Paths.Socket, Options{Watch: true, Version: "bench", Kind: "console"})
	require.NoError(b, err)
	defer cl.Close()
	const window = 5 * time.Second
	b.ResetTimer()
	for range b.N {
		u0 := cpuNow()
		start := time.Now()
		t := time.NewTimer(window)
		<-t.C
		used := cpuNow() - u0
		b.ReportMetric(100*used.Seconds()/time.Since(start).Seconds(), "%cpu")
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
