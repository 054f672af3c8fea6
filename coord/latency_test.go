package coord

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// latencies are the three clocks of one correction, from the moment Do is
// called: Do returned (the text is queued for the pty's writer), the agent
// read it from its tty (its own inputs log, same machine clock), and its
// echo reached the console's screen.
type latencies struct{ do, agent, screen []time.Duration }

// correctionRig runs an agent that sits at its prompt (it ignored its
// brief), so every correction is answered with an echo.
func correctionRig(t testing.TB) (*bundle, task.ID) {
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))
	b.waitRecord(t, 10*time.Second, "the brief", func() bool { return len(b.inputsOf(t, agent.InputBrief)) == 1 })
	return b, id
}

// measure sends n corrections one at a time and returns their latencies.
func measure(t testing.TB, b *bundle, id task.ID, n int) latencies {
	ctx := context.Background()
	var l latencies
	sent := map[string]time.Time{}
	run := time.Now().UnixNano() % 1e6 // tells this call's probes from an earlier call's
	for i := range n {
		text := fmt.Sprintf("probe-%06d-%04d", run, i)
		t0 := time.Now()
		res, err := b.c.Do(ctx, Command{Kind: CmdCorrect, TaskID: id, Text: text})
		l.do = append(l.do, time.Since(t0))
		require.NoError(t, err)
		require.True(t, res.Delivered, res.Message)
		seen := b.waitPane(t, id, "received human decision: "+text, 10*time.Second)
		l.screen = append(l.screen, seen.Sub(t0))
		sent[task.DecisionHeader+" "+text] = t0
	}
	for _, r := range b.inputsOf(t, agent.InputDecision) {
		if t0, ok := sent[r.Text]; ok {
			l.agent = append(l.agent, r.At.Sub(t0.Round(0)))
		}
	}
	require.Len(t, l.agent, n, "the agent read every correction once")
	return l
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Enter-to-pty latency of a correction, in process. No bound is asserted:
// the figures are reported (go test -run TestCorrectionLatency -v ./coord/).
func TestCorrectionLatency(t *testing.T) {
	t.Parallel()
	b, id := correctionRig(t)
	l := measure(t, b, id, 50)
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"Do returned (queued for the pty writer)", l.do}, {"agent read it from its tty", l.agent}, {"echo on the console's screen", l.screen}} {
		t.Logf("correction latency, %-40s p50 %.2f ms  p99 %.2f ms  (n=%d)", m.name, ms(pct(m.ds, 0.5)), ms(pct(m.ds, 0.99)), len(m.ds))
	}
}

// BenchmarkCorrectionLatency reports the same figures as metrics:
// go test -run '^$' -bench CorrectionLatency -benchtime 50x ./coord/
func BenchmarkCorrectionLatency(bm *testing.B) {
	b, id := correctionRig(bm)
	bm.ResetTimer()
	l := measure(bm, b, id, bm.N)
	bm.StopTimer()
	bm.ReportMetric(ms(pct(l.agent, 0.5)), "p50-ms")
	bm.ReportMetric(ms(pct(l.agent, 0.99)), "p99-ms")
	bm.ReportMetric(ms(pct(l.screen, 0.5)), "screen-p50-ms")
	bm.ReportMetric(ms(pct(l.screen, 0.99)), "screen-p99-ms")
}

// The command line's path: a correction sent over the control socket from
// another process's point of view reaches the live pane within a second,
// and the socket is the owner's alone.
func TestCorrectionOverControlSocketReachesPaneWithinASecond(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)
	b.stop()
	b.control = t.TempDir() + "/c.sock"
	b.start(t)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))
	b.waitRecord(t, 10*time.Second, "the brief", func() bool { return len(b.inputsOf(t, agent.InputBrief)) == 1 })

	fi, err := os.Stat(b.control)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the control socket is the owner's alone")

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := Send(ctx, b.control, Command{Kind: CmdCorrect, TaskID: task.ID(id.Short()), Text: "from the CLI", Author: "cli"})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	dl, _ := ctx.Deadline()
	b.waitPane(t, id, "received human decision: from the CLI", time.Until(dl))
}
