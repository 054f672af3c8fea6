package coord

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Attention is what a console's flag says of tv, and `status` of a task
// that waits: the engine's flag (a dialog to answer, a limit's reset, a
// program to install, why no slot can run it), else why a silent pane is
// not stuck, else the reason an ended or parked task is where it is; ""
// when there is nothing to say.
func Attention(tv TaskView) string {
	if tv.Flag != "" {
		return tv.Flag
	}
	if tv.Working != "" {
		return tv.Working // why a silent pane is not stuck: no alarm
	}
	switch tv.Task.State {
	case task.StateFailed, task.StateParked, task.StateCancelled:
		r := tv.Task.Reason
		if !strings.Contains(r, " ") {
			// A reason's code ("attempts-exhausted") reads as words.
			r = strings.ReplaceAll(r, "-", " ")
		}
		return r
	}
	return ""
}

// AttentionAt is Attention with the countdown to the provider's limit
// reset in front ("⏳ 01:29 Waiting for the limit: …"), computed at now so
// it counts down between snapshots; Attention as it is when the task waits
// for no limit.
func AttentionAt(tv TaskView, now time.Time) string {
	f := Attention(tv)
	if tv.LimitReset.IsZero() || f == "" {
		return f
	}
	s := int(max(tv.LimitReset.Sub(now), 0).Round(time.Second) / time.Second)
	return fmt.Sprintf("⏳ %02d:%02d %s", s/60, s%60, f)
}
