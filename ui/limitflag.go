package ui

import (
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// limitFlag is a task's flag with the countdown to its provider's limit
// reset in front ("⏳ 01:29 Waiting for the limit: …"), computed at now so
// the list counts down between snapshots; the flag as it is when the task
// waits for no limit.
func limitFlag(tv coord.TaskView, now time.Time) string {
	f := taskFlag(tv)
	if tv.LimitReset.IsZero() || f == "" {
		return f
	}
	return "⏳ " + clock(tv.LimitReset.Sub(now)) + " " + f
}
