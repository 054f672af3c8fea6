package host

import (
	"context"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/wire"
)

func dialRaw(path string) (*wire.Conn, error) {
	nc, err := wire.Dial(context.Background(), path)
	if err != nil {
		return nil, err
	}
	return wire.NewConn(nc), nil
}

func pidfdOpen(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

// pollReadable waits for a pidfd to say its process exited.
func pollReadable(fd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue // the runtime's signals interrupt poll
		}
		return err == nil && n > 0
	}
}

func wireFrame(id uint64, op string) wire.Frame { return wire.Frame{ID: id, Op: op} }
