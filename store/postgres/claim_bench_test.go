package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// BenchmarkLeaseClaimFourEngines measures placement throughput: four
// engines (four Stores, each with its own pool, on one database) claim
// from 1,000 queued tasks at once, each offering every task in the same
// order (a batch of the first coord.ClaimBatch of its view), as engines
// with the same view of the queue do, until none is left. It reports tasks claimed per second and fails on a double claim.
// The reference in the same run is one engine alone.
//
//	go test -run '^$' -bench LeaseClaimFourEngines -benchtime 3x ./store/postgres
func BenchmarkLeaseClaimFourEngines(b *testing.B) {
	url := pgtest.Start(b).NewDatabase(b)
	ctx := context.Background()
	var engines []*Store
	for range 4 {
		s, err := Open(ctx, url)
		require.NoError(b, err)
		defer s.Close()
		engines = append(engines, s)
	}
	const tasks = 1000
	const claimBatch = 64 // coord.ClaimBatch
	round := 0
	run := func(claimers []*Store) time.Duration {
		round++
		now := time.Now().UTC().Truncate(time.Millisecond)
		ids := make([]task.ID, tasks)
		for i := range ids {
			ids[i] = task.ID(fmt.Sprintf("01R%03dT%019d", round, i))
			require.NoError(b, engines[0].TaskInsert(ctx, task.Task{ID: ids[i], Title: "t", Goal: "g", Verify: "true", Repo: ".",
				Pipeline: task.Pipeline{task.PhaseImplement}, State: task.StateQueued, Phase: task.PhaseImplement,
				CreatedAt: now, UpdatedAt: now}))
		}
		var (
			mu  sync.Mutex
			got = map[task.ID]int{}
			wg  sync.WaitGroup
		)
		start := time.Now()
		for e, s := range claimers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				holder := fmt.Sprintf("engine-%d", e)
				// The engine's view of the queue: a claim offers its first
				// claimBatch tasks; what another engine took leaves the
				// view when a claim finds none of a batch queued, as the
				// coordinator rereads them.
				view := slices.Clone(ids)
				for len(view) > 0 {
					cands := view[:min(claimBatch, len(view))]
					at := time.Now()
					res, err := s.LeaseClaim(ctx, store.Claim(cands, holder, at, at.Add(time.Minute),
						func(t task.Task) []task.Event {
							return []task.Event{{TaskID: t.ID, Kind: task.EvTaskLeased, Text: "leased to " + holder, At: at}}
						}))
					tk := res.Before
					if errors.Is(err, store.ErrNotFound) {
						view = view[len(cands):]
						continue
					}
					if err != nil {
						b.Error(err)
						return
					}
					view = slices.DeleteFunc(view, func(id task.ID) bool { return id == tk.ID })
					mu.Lock()
					got[tk.ID]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		took := time.Since(start)
		require.Len(b, got, tasks, "every task claimed")
		for id, n := range got {
			require.Equal(b, 1, n, "task %s claimed %d times", id, n)
		}
		return took
	}
	var four, one time.Duration
	b.ResetTimer()
	for range b.N {
		four += run(engines)
		one += run(engines[:1])
	}
	b.StopTimer()
	b.ReportMetric(float64(tasks*b.N)/four.Seconds(), "claims/s-4-engines")
	b.ReportMetric(float64(tasks*b.N)/one.Seconds(), "claims/s-1-engine")
}
