package coord

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// 32 tasks placed on 32 slots at once, three rounds, through the whole
// coordinator (a real git repository and its worktrees, a real SQLite
// store, the real verify gate; fake sessions): every task gets its
// worktree and a confirmed session at its first attempt. Unserialised,
// git's worktree commands failed with "failed to read
// .git/worktrees/<other>/commondir" in 11 of 21 runs with 8 or more
// slots, each failure charging an attempt. What races is git, not the
// agent: the sessions are fakes, so each task costs what placement costs
// (worktree, baseline gate, brief) and no pty or process.
func TestFakeThirtyTwoTasksOnThirtyTwoSlotsThreeTimes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("96 placements: skipped with -short")
	}
	synctest.Test(t, func(t *testing.T) {
		const slots, rounds = 32, 3
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Slots = nil
			for i := range slots {
				cfg.Slots = append(cfg.Slots, config.Slot{Name: fmt.Sprintf("s%02d", i), Harness: fakeHarness, Capacity: 1})
			}
		})
		ctx := context.Background()
		for round := range rounds {
			ids := map[task.ID]bool{}
			for i := range slots {
				ids[b.addTitled(t, fmt.Sprintf("round %d task %d", round, i))] = true
			}
			// Every task of the round is launched and confirmed, and
			// nothing on the way is a refusal or a requeue.
			for range slots {
				b.agents.Next().Confirm()
			}
			confirmed := map[task.ID]bool{}
			b.waitEvent(t, func(e task.Event) bool {
				if !ids[e.TaskID] {
					return false
				}
				if e.IsRefusal() || e.Kind == task.EvTaskRequeued {
					t.Fatalf("round %d: %s [%s] %s\nevents:\n%s", round, e.Kind, e.Reason, e.Text, b.dump())
				}
				if e.Kind == task.EvSessionLaunched {
					require.Regexp(t, `attempt 1\b`, e.Text, "round %d", round)
				}
				if e.Kind == task.EvSessionConfirmed {
					confirmed[e.TaskID] = true
				}
				return len(confirmed) == slots
			})
			// All 32 ran at once: each is running on a slot of its own.
			b.barrier(t)
			busy := 0
			for _, tv := range b.c.Snapshot().Tasks {
				if ids[tv.Task.ID] {
					require.Equal(t, task.StateRunning, tv.Task.State, "round %d: task %s", round, tv.Task.ID)
					require.NotEmpty(t, tv.SessionID)
					busy++
				}
			}
			require.Equal(t, slots, busy)

			// Cancel the round and wait until every session has ended, so
			// the next round finds all 32 slots free.
			for id := range ids {
				_, err := b.c.Do(ctx, Command{Kind: CmdCancel, TaskID: id})
				require.NoError(t, err)
			}
			exited := map[task.ID]bool{}
			b.waitEvent(t, func(e task.Event) bool {
				if ids[e.TaskID] && e.Kind == task.EvSessionExited {
					exited[e.TaskID] = true
				}
				return len(exited) == slots
			})
			for id := range ids {
				tk, err := b.st.TaskGet(ctx, id)
				require.NoError(t, err)
				require.Equal(t, task.StateCancelled, tk.State)
				require.Equal(t, 1, tk.Attempt, "task %s: attempts", id)
			}
			// Prune the round's worktrees at once, as `prune` does, so the
			// next round adds beside removals' leftovers, not beside
			// 32*round live worktrees.
			r, err := repo.Open(b.root)
			require.NoError(t, err)
			var wg sync.WaitGroup
			errs := make(chan error, slots)
			for id := range ids {
				wg.Go(func() {
					errs <- r.WorktreeRemove(filepath.Join(b.root, filepath.FromSlash(repo.WorktreesDir), string(id)))
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
		}
	})
}

// addTitled adds a one-phase task on the fake harness, titled title, whose
// gate passes at once.
func (b *fakeBundle) addTitled(t *testing.T, title string) task.ID {
	t.Helper()
	res, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
		Title: title, Goal: "Stay idle.", Acceptance: []string{"none"},
		Verify: "true", Harness: fakeHarness, Pipeline: task.Pipeline{task.PhaseImplement},
	}})
	require.NoError(t, err)
	return res.TaskID
}
