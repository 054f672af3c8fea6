package lease

import "time"

// A session whose screen is still may be working: a build or a test run
// behind a spinner prints nothing for minutes. CPU time its process tree
// used is evidence of work that the screen does not show: a still screen
// over a busy tree is not stuck, and a lease renews on it as on a change
// of screen, within the same renewal window and cap.
//
// An agent CLI sitting at its prompt, or drawing a spinner while it waits
// for its model, uses CPU too, up to half a core for opencode's terminal
// UI on a loaded machine: the session leaves the CLI's own processes out
// of the time it reports once a minute has passed since its last input or
// change of screen (session.OwnGrace), and WorkShare is set above
// the noise of what remains, so only work that keeps at least a tenth of
// one core busy counts.

// WorkShare is the share of one core a session's tree must have used,
// over the time compared, to count as working.
const WorkShare = 0.10

// CPUWindow is how far back a still screen's CPU time is looked at for
// the stuck flag: the tree worked in the last minute, or it did not.
const CPUWindow = time.Minute

// CPUWorks reports whether used CPU time over span of wall time is work:
// at least WorkShare of one core. A span of zero or less is never work.
func CPUWorks(used, span time.Duration) bool {
	return span > 0 && used > 0 && float64(used) >= WorkShare*float64(span)
}

// cpuAdvanced reports whether the tree worked between base and sample, by
// CPUWorks over the time between them.
func (sample Progress) cpuAdvanced(base Progress) bool {
	if sample.CPU <= base.CPU || base.At.IsZero() || !sample.At.After(base.At) {
		return false
	}
	return CPUWorks(sample.CPU-base.CPU, sample.At.Sub(base.At))
}
