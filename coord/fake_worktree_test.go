package coord

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A worktree replaced by a symbolic link while its agent works ends the
// phase with the real reason: the gate does not run wherever the link
// points (its command would write a file there), each relaunch is refused
// for it and counted, and the task fails after max_attempts with the link
// named, within minutes rather than backing off for ever as a machine
// failure would.
func TestFakeAWorktreeReplacedByASymlinkEndsThePhaseWithTheRealReason(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.addTask(t, fakeHarness, "touch gate-ran", task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		dir := a.Params().Dir
		elsewhere := t.TempDir()
		require.NoError(t, os.Rename(dir, dir+".moved"))
		require.NoError(t, os.Symlink(elsewhere, dir))
		replaced := time.Now()
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskFailed, last.Kind, b.dump())
		require.Less(t, time.Since(replaced), 10*time.Minute, "the task failed in a bounded time:\n%s", b.dump())

		_, err := os.Stat(filepath.Join(elsewhere, "gate-ran"))
		require.ErrorIs(t, err, os.ErrNotExist, "the gate ran where the link points")
		require.Empty(t, b.ledger(t, id, func(e task.Event) bool { return e.Kind == task.EvVerifyFinished && e.SessionID != "" }),
			"no gate ran:\n%s", b.dump())
		refusals := b.ledger(t, id, func(e task.Event) bool { return e.Kind == task.EvRefusal && e.Reason == task.ReasonWorktreeFailed })
		require.Len(t, refusals, b.cfg.Lease.MaxAttempts, b.dump())
		for _, e := range refusals {
			require.Contains(t, e.Text, "is a symbolic link to "+elsewhere)
		}
		require.Contains(t, b.taskView(t, id).Task.Reason, string(task.ReasonAttemptsExhausted))
	})
}

// A .git that cannot be written (immutable here: the tests run as root,
// whom mode bits do not stop) is no machine failure to back off from for
// ever: each launch is refused with git's own words and counted, and the
// task fails after max_attempts, naming them.
func TestFakeAReadOnlyGitFailsThePhaseWithGitsReason(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		gitDir := filepath.Join(b.root, ".git")
		if out, err := exec.Command("chattr", "-R", "+i", gitDir).CombinedOutput(); err != nil {
			t.Skipf("chattr +i is not available here: %v: %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-R", "-i", gitDir).Run() })
		began := time.Now()
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskFailed, last.Kind, b.dump())
		require.Less(t, time.Since(began), 10*time.Minute, "the task failed in a bounded time:\n%s", b.dump())
		refusals := b.ledger(t, id, func(e task.Event) bool { return e.Kind == task.EvRefusal && e.Reason == task.ReasonWorktreeFailed })
		require.Len(t, refusals, b.cfg.Lease.MaxAttempts, b.dump())
		for _, e := range refusals {
			require.Contains(t, e.Text, "the repository's git directory cannot be written")
			require.Contains(t, e.Text, "operation not permitted")
			require.NotContains(t, e.Text, "machine's failure")
		}
	})
}
