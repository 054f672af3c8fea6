package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// BenchmarkListenAcrossStores measures how long after a write commits on
// one Store (engine B) a listener of another Store on the same database
// (the engine a console is attached to) is woken, and reports p50 and p99.
// The reference in the same run is the write's own round trip.
//
//	go test -run '^$' -bench ListenAcrossStores -benchtime 500x ./store/postgres
func BenchmarkListenAcrossStores(b *testing.B) {
	url := pgtest.Start(b).NewDatabase(b)
	ctx := context.Background()
	w, err := Open(ctx, url)
	require.NoError(b, err)
	defer w.Close()
	r, err := Open(ctx, url)
	require.NoError(b, err)
	defer r.Close()
	ch, err := r.Listen(ctx)
	require.NoError(b, err)
	wake := make([]time.Duration, 0, b.N)
	write := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		require.NoError(b, w.EventAppend(ctx, task.Event{TaskID: "t1", Kind: task.EvUsage, Text: "x", At: start}))
		write = append(write, time.Since(start))
		<-ch
		wake = append(wake, time.Since(start))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)*p/100].Microseconds())
	}
	b.ReportMetric(pct(wake, 50), "wake-p50-µs")
	b.ReportMetric(pct(wake, 99), "wake-p99-µs")
	b.ReportMetric(pct(write, 50), "write-p50-µs")
}
