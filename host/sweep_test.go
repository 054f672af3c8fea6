package host

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A host that does not answer its handshake in time is dialled again, with
// more time each try, before the sweep gives up on it and says why.
func TestTheSweepDialsASlowHostAgain(t *testing.T) {
	saved := sweepDials
	sweepDials = []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	t.Cleanup(func() { sweepDials = saved })

	root := t.TempDir()
	require.NoError(t, os.MkdirAll(Dir(root), 0o700))
	ln, err := net.Listen("unix", SocketPath(root, "01SLOWHOST"))
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()

	lines := StopAll(context.Background(), root, "test", time.Second, nil)
	require.Len(t, lines, 1)
	require.True(t, strings.HasPrefix(lines[0], "session SLOWHOST: "), lines[0])
	for range sweepDials {
		select {
		case c := <-accepted:
			c.Close()
		case <-time.After(10 * time.Second):
			t.Fatal("fewer dials than tries")
		}
	}
	select {
	case <-accepted:
		t.Fatal("more dials than tries")
	default:
	}
}
