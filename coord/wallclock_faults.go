//go:build orchestra_faults

package coord

import (
	"os"
	"time"
)

// wallClock is the machine's clock shifted by FaultClockOffsetEnv. The
// shifted time keeps its monotonic reading, so only what is compared
// across machines (a timestamp written to the store) sees the offset, as
// with a real machine's clock that is off.
var wallClock = func() func() time.Time {
	off, err := time.ParseDuration(os.Getenv(FaultClockOffsetEnv))
	if err != nil || off == 0 {
		return time.Now
	}
	return func() time.Time { return time.Now().Add(off) }
}()
