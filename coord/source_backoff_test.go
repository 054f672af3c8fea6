package coord

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/forge"
)

// downForge is a forge whose issue list fails while down, or answers a
// rate limit once; it records when it was asked.
type downForge struct {
	forge.Forge
	mu    sync.Mutex
	down  bool
	limit time.Time // a rate limit until then, answered once
	asked []time.Time
}

func (f *downForge) Issues(context.Context, string, time.Time) ([]forge.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, time.Now())
	if !f.limit.IsZero() {
		reset := f.limit
		f.limit = time.Time{}
		return nil, &forge.RateLimitError{Reset: reset}
	}
	if f.down {
		return nil, errors.New("connection refused")
	}
	return nil, nil
}

func (f *downForge) gaps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(f.asked); i++ {
		out = append(out, f.asked[i].Sub(f.asked[i-1]))
	}
	return out
}

// A forge that is down is asked again after a wait that doubles up to
// sourceBackoffMax, and at the interval again once it answers; a rate
// limit is waited out until the forge's reset.
func TestSourceBacksOffWhileTheForgeIsDownAndWaitsOutARateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &downForge{down: true}
		s := NewSource(nil, SourceConfig{Forge: f, Interval: time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(ctx) }()

		time.Sleep(60 * time.Second) // the fake clock: a minute of outage
		synctest.Wait()
		gaps := f.gaps()
		require.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}, gaps[:4])
		for _, g := range gaps[3:] {
			require.Equal(t, sourceBackoffMax, g)
		}
		n := len(f.asked)
		require.Less(t, n, 12, "a minute of outage is a handful of requests, not 60")

		// Back: read within the backoff's bound, then every interval.
		f.mu.Lock()
		f.down = false
		f.mu.Unlock()
		time.Sleep(sourceBackoffMax + 5*time.Second)
		synctest.Wait()
		gaps = f.gaps()
		require.LessOrEqual(t, gaps[n-1], sourceBackoffMax)
		for _, g := range gaps[n:] {
			require.Equal(t, time.Second, g)
		}

		// A rate limit until 30 s from now: the next request is then.
		f.mu.Lock()
		f.limit = time.Now().Add(30 * time.Second)
		f.asked = nil
		f.mu.Unlock()
		time.Sleep(40 * time.Second)
		synctest.Wait()
		gaps = f.gaps()
		require.NotEmpty(t, gaps)
		require.InDelta(t, float64(30*time.Second), float64(gaps[0]), float64(time.Second), "waited until the reset")
		cancel()
		<-done
	})
}
