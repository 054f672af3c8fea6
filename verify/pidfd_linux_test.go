package verify

import (
	"time"

	"golang.org/x/sys/unix"
)

func pidfd(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

// waitExit reports whether the process behind fd exited within d.
func waitExit(fd int, d time.Duration) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, int(d/time.Millisecond))
	return err == nil && n == 1
}
