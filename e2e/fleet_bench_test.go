package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// BenchmarkFleetEventLatency measures how long an event written by engine
// B takes to reach a console attached to engine A: a correction is sent to
// B (a CLI-style client on B's socket), B records it in the shared store,
// A hears of it through LISTEN/NOTIFY, rereads the ledger and pushes the
// event to its console. It reports p50 and p99 from sending the command to
// the console receiving the event, with B's own reply as the reference.
//
//	go test -run '^$' -bench FleetEventLatency -benchtime 200x ./e2e
func BenchmarkFleetEventLatency(b *testing.B) {
	f := newFleet(b, []string{"machine-a", "machine-b"}, 1, 10)
	f.start(b, "machine-a")
	f.start(b, "machine-b")
	ids := f.add(b, "machine-b", 1)
	ctx := context.Background()
	dial := func(host string, watch bool) *engine.Client {
		cl, err := engine.Dial(ctx, engine.PathsFor(f.engines[host].dir).Socket, engine.Options{Watch: watch, Kind: "console"})
		require.NoError(b, err)
		b.Cleanup(func() { cl.Close() })
		return cl
	}
	onB, consoleA := dial("machine-b", false), dial("machine-a", true)
	_, err := onB.Do(ctx, coord.Command{Kind: coord.CmdPark, TaskID: ids[0], Text: "benchmark"})
	require.NoError(b, err)
	notices, unsub := consoleA.Subscribe()
	defer unsub()
	reach := make([]time.Duration, 0, b.N)
	reply := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		marker := fmt.Sprintf("latency probe %d", i)
		start := time.Now()
		_, err := onB.Do(ctx, coord.Command{Kind: coord.CmdCorrect, TaskID: ids[0], Text: marker, Author: "bench"})
		require.NoError(b, err)
		reply = append(reply, time.Since(start))
		for got := false; !got; {
			select {
			case n, ok := <-notices:
				require.True(b, ok, "console A's subscription ended")
				got = n.Event != nil && n.Event.Kind == task.EvDecisionRecorded && strings.HasSuffix(n.Event.Text, marker)
			case <-time.After(time.Minute):
				b.Fatalf("console A never saw %q", marker)
			}
		}
		reach = append(reach, time.Since(start))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)*p/100].Microseconds()) / 1000
	}
	b.ReportMetric(pct(reach, 50), "B-to-console-A-p50-ms")
	b.ReportMetric(pct(reach, 99), "B-to-console-A-p99-ms")
	b.ReportMetric(pct(reply, 50), "B-reply-p50-ms")
}
