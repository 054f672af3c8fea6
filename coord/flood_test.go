package coord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// floodBytes is how much the flooding pane prints per round: the 50 MB of
// the issue, as coloured log lines.
const floodBytes = 50 << 20

// floodHarness is a session that says it is ready, sits still long enough
// to be confirmed, writes its process group's id to pidFile, then cats a
// 50 MB file over and over.
func floodHarness(tb testing.TB, pidFile string) session.Spec {
	path := filepath.Join(tb.TempDir(), "flood.txt")
	line := []byte("internal/pkg/file.go:12:3: \x1b[1;31merror:\x1b[0m something went wrong in café 日本語 ✓ step\r\n")
	require.NoError(tb, os.WriteFile(path, bytes.Repeat(line, floodBytes/len(line)), 0o644))
	script := fmt.Sprintf("echo FLOOD READY; echo $$ > %q; sleep 1; while :; do cat %q; done", pidFile, path)
	argv, _ := json.Marshal([]string{"/bin/sh", "-c", script})
	var argvs []string
	_ = json.Unmarshal(argv, &argvs)
	return session.Spec{
		Argv: argvs, Env: []string{"PATH"}, Delivery: session.DeliveryType, Ready: "FLOOD READY",
		Quiet: session.Duration{Duration: 300 * time.Millisecond},
	}
}

// BenchmarkFloodIsolation measures a correction's Enter-to-pty latency and
// the second pane's screen latency (the agent's echo of it reaching the
// console's emulator) while another session floods its pane with 50 MB
// cats, against the same with that session stopped (SIGSTOP to its
// process group), and reports the flood's figures as ratios to the quiet
// ones (goal: under 2x). Quiet and flooded rounds alternate, so a machine
// whose load drifts during the run weighs on both alike. A p99 of a few
// hundred probes moves with the machine's load; bench/flood.sh takes the
// median of five runs of 1,000:
//
//	go test -run '^$' -bench FloodIsolation -benchtime 1000x ./coord/
func BenchmarkFloodIsolation(bm *testing.B) {
	var flood session.Spec
	pidFile := filepath.Join(bm.TempDir(), "flood.pid")
	b := setup(bm, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, func(cfg *config.Config) {
		flood = floodHarness(bm, pidFile)
		cfg.Harness["flood"] = flood
		cfg.Lease.Length.Duration = 30 * time.Minute
		cfg.Stuck.After.Duration = 30 * time.Minute
	})
	id := b.addPipeline(bm, task.Pipeline{task.PhaseImplement})
	b.waitEvent(bm, 30*time.Second, kindIs(task.EvBriefDelivered))
	b.waitRecord(bm, 10*time.Second, "the brief", func() bool { return len(b.inputsOf(bm, agent.InputBrief)) == 1 })

	res, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
		Title: "flood", Goal: "print", Verify: "true", Harness: "flood", Pipeline: task.Pipeline{task.PhaseImplement},
	}})
	require.NoError(bm, err)
	fid := res.TaskID
	b.waitEvent(bm, 30*time.Second, func(e task.Event) bool { return e.TaskID == fid && e.Kind == task.EvBriefDelivered })
	// The flood is on once its pane has changed after the brief.
	v, ok := b.c.Pane(fid)
	require.True(bm, ok)
	start := v.Version()
	for v.Version() < start+100 {
		b.waitPaneChange(bm, fid)
	}
	raw, err := os.ReadFile(pidFile)
	require.NoError(bm, err)
	pgid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(bm, err)
	pause := func(on bool) {
		sig := syscall.SIGCONT
		if on {
			sig = syscall.SIGSTOP
		}
		require.NoError(bm, syscall.Kill(-pgid, sig))
		if on {
			// What was read before the stop is parsed within a few frames:
			// quiet means the pane has stopped changing.
			for last := v.Version(); ; {
				time.Sleep(20 * time.Millisecond)
				if now := v.Version(); now == last {
					break
				} else {
					last = now
				}
			}
		}
	}
	bm.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGCONT) })

	const rounds = 10
	var quiet, flooded latencies
	var floodTime time.Duration
	var floodBytesOut int64
	cast := b.c.castPath(fid, b.taskView(bm, fid).SessionID)
	bm.ResetTimer()
	for r := range rounds {
		n := bm.N / rounds
		if r < bm.N%rounds {
			n++
		}
		pause(true)
		q := measure(bm, b, id, n)
		pause(false)
		size0, t0 := fileSize(bm, cast), time.Now()
		f := measure(bm, b, id, n)
		floodTime += time.Since(t0)
		floodBytesOut += fileSize(bm, cast) - size0
		quiet.agent, quiet.screen = append(quiet.agent, q.agent...), append(quiet.screen, q.screen...)
		flooded.agent, flooded.screen = append(flooded.agent, f.agent...), append(flooded.screen, f.screen...)
	}
	after := v.Version()
	bm.StopTimer()

	report := func(name string, q, f []time.Duration) {
		bm.ReportMetric(ms(pct(q, 0.5)), name+"-quiet-p50-ms")
		bm.ReportMetric(ms(pct(q, 0.99)), name+"-quiet-p99-ms")
		bm.ReportMetric(ms(pct(f, 0.5)), name+"-flood-p50-ms")
		bm.ReportMetric(ms(pct(f, 0.99)), name+"-flood-p99-ms")
		bm.ReportMetric(float64(pct(f, 0.99))/float64(pct(q, 0.99)), name+"-p99-ratio")
	}
	report("pty", quiet.agent, flooded.agent)
	report("screen", quiet.screen, flooded.screen)
	bm.ReportMetric(float64(after-start), "flood-screen-updates")
	// What the flooding agent got out while it ran, as its recording grew
	// (JSON-escaped, so a little more than the bytes it printed; 0 once
	// the recording reached its cap).
	bm.ReportMetric(float64(floodBytesOut)/floodTime.Seconds()/(1<<20), "flood-MB/s")
	bm.ReportMetric(0, "ns/op")
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	require.NoError(tb, err)
	return fi.Size()
}

// waitPaneChange waits for the next pane notice of id.
func (b *bundle) waitPaneChange(tb testing.TB, id task.ID) {
	tb.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case n := <-b.notices:
			if n.Event != nil {
				b.events = append(b.events, *n.Event)
				continue
			}
			if n.Pane == id {
				return
			}
		case <-deadline.C:
			tb.Fatalf("the pane of %s never changed", id)
		}
	}
}
