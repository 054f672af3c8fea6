package session

import (
	"sync"

	"golang.org/x/sys/unix"
)

var subreaperOnce sync.Once

// becomeSubreaper makes this process the subreaper of its descendants, so a
// program's orphaned children are re-parented here rather than to init and
// reapGroup can collect them. Without it a killed background job stays a
// zombie in the program's process group until init gets round to it.
func becomeSubreaper() {
	subreaperOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}
