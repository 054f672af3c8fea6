package host

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// AnchorEnv names, in the environment, a process whose end ends every
// engine and session host started beneath it, their agents with them. A
// test binary sets it to its own pid, so that what its tests start cannot
// outlive it even when it dies of its timeout before a cleanup runs. The
// engine passes its environment to the hosts it starts; agents never see
// it (their environment is an allow-list).
const AnchorEnv = "ORCHESTRA_ANCHOR_PID"

// anchorPoll is how often a machine without pidfds checks the anchor.
const anchorPoll = time.Second

// AnchorGone returns a channel closed once the process AnchorEnv names has
// ended, or nil (which never fires) when the variable is unset or not a
// pid.
func AnchorGone() <-chan struct{} {
	pid, err := strconv.Atoi(os.Getenv(AnchorEnv))
	if err != nil || pid <= 0 {
		return nil
	}
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			defer unix.Close(fd)
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for {
				// A pidfd polls readable once its process has exited.
				if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
					return
				}
			}
		}
		for syscall.Kill(pid, 0) == nil {
			time.Sleep(anchorPoll)
		}
	}()
	return gone
}
