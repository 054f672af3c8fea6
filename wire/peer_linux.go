package wire

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// CheckPeer refuses a peer that runs as another user. The socket's mode
// already keeps others out; this holds even when someone loosened it.
func CheckPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("read the peer's credentials: %w", cerr)
	}
	if me := os.Getuid(); int(cred.Uid) != me {
		return fmt.Errorf("this socket belongs to user %d; user %d (pid %d) may not connect to it", me, cred.Uid, cred.Pid)
	}
	return nil
}
