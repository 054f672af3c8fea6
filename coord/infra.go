package coord

import (
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// infrastructure reports whether a launch refusal is the machine's failure
// rather than the task's: the worktree could not be prepared, the disk is
// full, or the process ran out of file descriptors or inotify watches.
// Such a failure is retried with backoff and never charged to the task as
// an attempt: a full disk must not fail a batch of good tasks.
//
// A failure that retrying cannot mend (a read-only or immutable .git, a
// worktree replaced by a symbolic link) is the task's to count, so it
// fails with its real reason after max_attempts instead of backing off for
// ever.
func infrastructure(ref *task.Refusal) bool {
	for _, s := range []string{repo.ErrGitNotWritable.Error(), repo.ErrWorktreeReplaced.Error()} {
		if strings.Contains(ref.Detail, s) {
			return false
		}
	}
	if ref.Reason == task.ReasonWorktreeFailed {
		return true
	}
	d := strings.ToLower(ref.Detail)
	for _, s := range []string{"no space left on device", "disk quota exceeded", "too many open files", "inotify", "cannot allocate memory"} {
		if strings.Contains(d, s) {
			return true
		}
	}
	return false
}

// infraRetry is the backoff of tasks whose launch failed for a reason of
// the machine's: 1s after the first failure, doubling to at most a minute;
// a launch that goes live clears it. It lives on the coordinator's loop.
type infraRetry struct {
	until    map[task.ID]time.Time
	failures map[task.ID]int
	// hostLost counts the sessions of a task whose session host died
	// under them on this engine; past hostLossesFree they are charged.
	hostLost map[task.ID]int
}

// hostLossesFree is how many deaths of a task's session hosts this engine
// gives back as the machine's failure before it charges them: a host that
// dies every time (a broken host binary, a memory limit too small for the
// agent) must not relaunch the task for ever.
const hostLossesFree = 5

// lostHost records that a session host of id died and reports whether the
// loss is still the machine's, not charged to the task.
func (b *infraRetry) lostHost(id task.ID) bool {
	if b.hostLost == nil {
		b.hostLost = map[task.ID]int{}
	}
	b.hostLost[id]++
	return b.hostLost[id] <= hostLossesFree
}

const (
	infraFirstRetry = time.Second
	infraMaxRetry   = time.Minute
)

// fail records a failure of id at now and returns the delay before the
// next launch.
func (b *infraRetry) fail(id task.ID, now time.Time) time.Duration {
	if b.until == nil {
		b.until, b.failures = map[task.ID]time.Time{}, map[task.ID]int{}
	}
	n := b.failures[id]
	b.failures[id] = n + 1
	d := infraFirstRetry << min(n, 6)
	d = min(d, infraMaxRetry)
	b.until[id] = now.Add(d)
	return d
}

// waiting reports whether id must not be launched yet.
func (b *infraRetry) waiting(id task.ID, now time.Time) bool {
	u, ok := b.until[id]
	return ok && now.Before(u)
}

// clear forgets id's failures: called when a launch goes live, so the next
// machine failure of the task starts again at the first delay.
func (b *infraRetry) clear(id task.ID) {
	delete(b.until, id)
	delete(b.failures, id)
}
