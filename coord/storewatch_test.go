package coord

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// storeFailure waits for the one store-failed notice and returns its text.
func (b *bundle) storeFailure(t *testing.T) string {
	t.Helper()
	return b.waitEvent(t, 30*time.Second, refusalOf(task.ReasonStoreFailed)).Text
}

// The store deleted mid-run: placement stops at once with one message that
// says what happened, where, and what to do; the live session keeps
// running; a task added afterwards is not started.
func TestStoreDeletedMidRunStopsPlacement(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))

	for _, suffix := range []string{"", "-wal", "-shm"} {
		require.NoError(t, os.Remove(b.storeAt+suffix))
	}
	text := b.storeFailure(t)
	require.Contains(t, text, b.storeAt)
	require.Contains(t, text, "was deleted")
	require.Contains(t, text, "Placement has stopped; live sessions keep running.")
	require.Contains(t, text, "orchestra-tui stop")
	require.Contains(t, text, b.c.Snapshot().StoreFault)

	_, ok := b.c.Pane(id)
	require.True(t, ok, "the live session was stopped")
	later := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.barrier(t)
	b.barrier(t)
	for _, tv := range b.c.Snapshot().Tasks {
		if tv.Task.ID == later {
			require.Equal(t, task.StateQueued, tv.Task.State, "a task was placed on a deleted store")
		}
	}
}

// A store that turns read-only: one clear message (not an error a second),
// placement stopped.
func TestStoreReadOnlyStopsPlacementWithOneMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))

	dir := filepath.Dir(b.storeAt)
	if os.Geteuid() == 0 {
		// Root writes through any mode: make the directory a read-only
		// mount of itself, as a file system remounted read-only would be.
		out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput()
		if err != nil && os.Getenv("CI") == "" {
			t.Skipf("cannot bind-mount as root here (%v: %s)", err, out)
		}
		require.NoError(t, err, string(out))
		t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
		out, err = exec.Command("mount", "-o", "remount,bind,ro", dir).CombinedOutput()
		require.NoError(t, err, string(out))
	} else {
		require.NoError(t, os.Chmod(b.storeAt, 0o400))
		require.NoError(t, os.Chmod(dir, 0o500))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	}
	text := b.storeFailure(t)
	require.Contains(t, text, "cannot be written")
	require.Contains(t, text, b.storeAt)
	require.Contains(t, text, "Placement has stopped")
	require.Contains(t, text, "writable")

	// Ten more ticks bring no second message.
	for range 10 {
		b.barrier(t)
	}
	for _, e := range b.events {
		if e.Reason == task.ReasonStoreFailed && e.Text != text {
			t.Fatalf("a second store message: %s", e.Text)
		}
	}
	require.Equal(t, 1, strings.Count(b.dump(), "["+string(task.ReasonStoreFailed)+"]"))
}
