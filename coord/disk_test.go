package coord

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A task's disk use (worktree and recordings) is measured off the loop
// when it launches and again when its state changes, and the snapshot
// carries it: a file of 1 MiB written in the worktree shows after the task
// is cancelled. A link out of the worktree is not followed.
func TestDiskUseIsMeasuredOnChangesAndShown(t *testing.T) {
	t.Parallel()
	measured := make(chan map[task.ID]DiskUse, 16)
	b := setupHooked(t, agent.Script{}, idleHarness, func(c *Coordinator) {
		c.disk.onMeasured = func(m map[task.ID]DiskUse) { measured <- m }
	})
	id := b.addIdle(t, "disk")
	b.waitEvent(t, time.Minute, kindIs(task.EvSessionConfirmed))
	// waitDisk returns the first measurement of id that ok accepts, once
	// the snapshot shows it.
	waitDisk := func(ok func(DiskUse) bool) DiskUse {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case m := <-measured:
				if u, in := m[id]; in && ok(u) {
					b.barrier(t)
					shown := b.taskView(t, id).Disk
					require.False(t, shown.At.Before(u.At), "the snapshot shows an older measurement")
					return u
				}
			case <-deadline:
				t.Fatalf("the task's disk use was never measured as expected; events:\n%s", b.dump())
			}
		}
	}
	first := waitDisk(func(u DiskUse) bool { return u.Worktree > 0 && u.Recordings > 0 })

	wt := filepath.Join(b.root, filepath.FromSlash(repo.WorktreesDir), string(id))
	require.NoError(t, os.WriteFile(filepath.Join(wt, "big.bin"), make([]byte, 1<<20), 0o600))
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "huge.bin"), make([]byte, 4<<20), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(wt, "elsewhere")))
	_, err := b.c.Do(context.Background(), Command{Kind: CmdCancel, TaskID: id})
	require.NoError(t, err)
	after := waitDisk(func(u DiskUse) bool { return u.Worktree >= first.Worktree+1<<20 })
	require.Less(t, after.Worktree, first.Worktree+2<<20, "the link out of the worktree was followed")
	require.GreaterOrEqual(t, after.Recordings, first.Recordings)
}

// Disk use is measured from what is on disk, not remembered: a restarted
// coordinator measures every task once at start.
func TestDiskUseIsMeasuredAtStart(t *testing.T) {
	t.Parallel()
	measured := make(chan map[task.ID]DiskUse, 16)
	b := setupHooked(t, agent.Script{}, idleHarness, func(c *Coordinator) {
		c.disk.onMeasured = func(m map[task.ID]DiskUse) { measured <- m }
	})
	id := b.addIdle(t, "disk at start")
	b.waitEvent(t, time.Minute, kindIs(task.EvSessionConfirmed))
	_, err := b.c.Do(context.Background(), Command{Kind: CmdCancel, TaskID: id})
	require.NoError(t, err)
	b.waitEvent(t, time.Minute, kindIs(task.EvSessionExited))
	b.stop()
	for len(measured) > 0 {
		<-measured
	}
	b.start(t)
	deadline := time.After(time.Minute)
	for {
		select {
		case m := <-measured:
			if u, in := m[id]; in {
				require.Positive(t, u.Worktree)
				require.Positive(t, u.Recordings)
				return
			}
		case <-deadline:
			t.Fatal("a restarted coordinator did not measure the task's disk use")
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
