package coord

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// 32 tasks placed on 32 slots at once, three rounds, through the whole
// coordinator (a real git repository, a real SQLite store, a real process
// in a real pty per task): every task gets its worktree and a confirmed
// session at its first attempt. Unserialised, git's worktree commands
// failed with "failed to read .git/worktrees/<other>/commondir" in 11 of
// 21 runs with 8 or more slots, each failure charging an attempt: three
// rounds of 32 catch that about 9 times in 10 and cost a minute, not
// the three and a half that ten took beside the package's other tests on a
// loaded machine.
//
// The agent is a shell that shows a prompt and sleeps, and the verify
// command is `true`, so each task costs what placement costs (worktree,
// baseline gate, pty, recording, brief) and no more.
func TestThirtyTwoTasksOnThirtyTwoSlotsThreeTimes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("96 launches: skipped with -short")
	}
	const slots, rounds = 32, 3
	b := setup(t, agent.Script{}, func(cfg *config.Config) {
		idleHarness(cfg)
		cfg.Slots = nil
		for i := range slots {
			cfg.Slots = append(cfg.Slots, config.Slot{Name: fmt.Sprintf("s%02d", i), Harness: "idle", Capacity: 1})
		}
	})
	ctx := context.Background()
	for round := range rounds {
		t0 := time.Now()
		ids := map[task.ID]bool{}
		for i := range slots {
			ids[b.addIdle(t, fmt.Sprintf("round %d task %d", round, i))] = true
		}
		// Every task of the round is confirmed, and nothing on the way is
		// a refusal or a requeue.
		confirmed := map[task.ID]bool{}
		b.waitEvent(t, 5*time.Minute, func(e task.Event) bool {
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
		busy := 0
		for _, tv := range b.c.Snapshot().Tasks {
			if ids[tv.Task.ID] {
				require.Equal(t, task.StateRunning, tv.Task.State, "round %d: task %s", round, tv.Task.ID)
				require.NotEmpty(t, tv.SessionID)
				busy++
			}
		}
		require.Equal(t, slots, busy)
		t1 := time.Now()

		// Cancel the round and wait until every session has ended, so the
		// next round finds all 32 slots free.
		for id := range ids {
			_, err := b.c.Do(ctx, Command{Kind: CmdCancel, TaskID: id})
			require.NoError(t, err)
		}
		exited := map[task.ID]bool{}
		b.waitEvent(t, 2*time.Minute, func(e task.Event) bool {
			if ids[e.TaskID] && e.Kind == task.EvSessionExited {
				exited[e.TaskID] = true
			}
			return len(exited) == slots
		})
		t.Logf("round %d: up %s, down %s", round, t1.Sub(t0), time.Since(t1))
		for id := range ids {
			tk, err := b.st.TaskGet(ctx, id)
			require.NoError(t, err)
			require.Equal(t, task.StateCancelled, tk.State)
			require.Equal(t, 1, tk.Attempt, "task %s: attempts", id)
		}
		// Prune the round's worktrees at once, as `prune` does, so the
		// next round adds beside removals' leftovers, not beside 32*round
		// live worktrees.
		var wg sync.WaitGroup
		errs := make(chan error, slots)
		for id := range ids {
			wg.Go(func() {
				errs <- b.repo.WorktreeRemove(filepath.Join(b.root, filepath.FromSlash(repo.WorktreesDir), string(id)))
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
}

// idleHarness adds the "idle" harness: a shell that shows a prompt and
// sleeps, the cheapest agent that launches, confirms and takes a brief.
func idleHarness(cfg *config.Config) {
	cfg.Harness["idle"] = session.Spec{
		Name: "idle", Argv: []string{"/bin/sh", "-c", "printf 'idle> '; exec sleep 600"}, Env: []string{"PATH"},
		Delivery: session.DeliveryType, Ready: "idle>", Submit: `\r`,
		Quiet:         session.Duration{Duration: 50 * time.Millisecond},
		LaunchTimeout: session.Duration{Duration: 2 * time.Minute},
	}
}

// addIdle adds a one-phase task for the idle harness whose verify command
// is `true`.
func (b *bundle) addIdle(t testing.TB, title string) task.ID {
	t.Helper()
	res, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
		Title: title, Goal: "Stay idle.", Acceptance: []string{"none"},
		Verify: "true", Harness: "idle", Pipeline: task.Pipeline{task.PhaseImplement},
	}})
	require.NoError(t, err)
	return res.TaskID
}
