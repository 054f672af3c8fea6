package repo

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// 32 worktrees prepared at once (32 tasks placed on 32 slots), ten times
// over, each round removed at once again: git's worktree commands share
// .git/worktrees/ without a lock, and unserialised they failed with
// "failed to read .git/worktrees/<other>/commondir". None may fail.
func TestConcurrentWorktreePreparationNeverFails(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("320 worktrees: skipped with -short")
	}
	b := setup(t)
	const slots, rounds = 32, 10
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, slots)
		paths := make([]string, slots)
		for i := range slots {
			wg.Go(func() {
				name := fmt.Sprintf("r%d-t%d", round, i)
				paths[i], errs[i] = b.r.WorktreeAdd(name, "task/"+name, "main")
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, task %d", round, i)
		}
		for i := range slots {
			wg.Go(func() { errs[i] = b.r.WorktreeRemove(paths[i]) })
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "remove: round %d, task %d", round, i)
		}
	}
}
