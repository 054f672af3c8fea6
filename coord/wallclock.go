//go:build !orchestra_faults

package coord

import "time"

// wallClock is the clock of a coordinator given none: the machine's.
var wallClock = time.Now
