package host

import (
	"net"
	"os/user"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// The trim comes once per quiet stretch after activity: not while output
// keeps coming, not before the quiet has passed, not again without new
// activity, and never after the session ended.
func TestTheTrimWaitsForQuietAfterActivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTrimmer()
		done := make(chan struct{})
		var n atomic.Int32
		trims := func() int32 { return n.Load() }
		go tr.run(time.Second, func() { n.Add(1) }, done)

		synctest.Wait()
		if trims() != 0 {
			t.Fatalf("trimmed %d times with no activity", trims())
		}
		// Output every half second for five seconds: never quiet.
		for range 10 {
			tr.active()
			time.Sleep(500 * time.Millisecond)
			synctest.Wait()
		}
		if trims() != 0 {
			t.Fatalf("trimmed %d times while output kept coming", trims())
		}
		time.Sleep(600 * time.Millisecond)
		synctest.Wait()
		if trims() != 1 {
			t.Fatalf("trimmed %d times after a quiet second, want 1", trims())
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if trims() != 1 {
			t.Fatalf("trimmed %d times over a quiet hour, want still 1", trims())
		}
		tr.active()
		time.Sleep(1100 * time.Millisecond)
		synctest.Wait()
		if trims() != 2 {
			t.Fatalf("trimmed %d times after new activity and quiet, want 2", trims())
		}
		tr.active()
		close(done)
		time.Sleep(time.Hour)
		synctest.Wait()
		if trims() != 2 {
			t.Fatalf("trimmed %d times after the end, want 2", trims())
		}
	})
}

// After DropCode the process runs on: code, read-only data and the
// dynamic linker's relocated tables (a RELRO segment is never dropped)
// fault back in, the libc calls of cgo included.
func TestTheProcessRunsOnAfterDropCode(t *testing.T) {
	DropCode()
	u, err := user.Current()
	require.NoError(t, err)
	require.NotEmpty(t, u.Username)
	_, err = net.LookupHost("localhost")
	require.NoError(t, err)
	require.True(t, overlaps([][2]uint64{{10, 20}}, 15, 30))
	require.False(t, overlaps([][2]uint64{{10, 20}}, 20, 30))
}

// TrimWhenQuiet runs the same trimmer on its own goroutine for another
// process of the binary (the console): one trim per quiet stretch after
// activity, none after stop, and stop may be called twice.
func TestTrimWhenQuietTrimsOncePerQuietStretchUntilStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		active, stop := TrimWhenQuiet(time.Second, func() { n.Add(1) })
		active()
		time.Sleep(500 * time.Millisecond)
		active()
		time.Sleep(900 * time.Millisecond)
		synctest.Wait()
		if got := n.Load(); got != 0 {
			t.Fatalf("trimmed %d times before a quiet second had passed", got)
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if got := n.Load(); got != 1 {
			t.Fatalf("trimmed %d times after a quiet second, want 1", got)
		}
		active()
		stop()
		stop()
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := n.Load(); got != 1 {
			t.Fatalf("trimmed %d times after stop, want still 1", got)
		}
	})
}
