package coord

import (
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
)

// workingText says why a silent session is not flagged stuck: its screen
// has been still for stuck.after or longer, but its process tree used CPU
// time that counts as work (lease.CPUWorks) in the last lease.CPUWindow.
// It is "" for any other session, and when stuck detection is off.
func workingText(p lease.Progress, stuckAfter time.Duration) string {
	if p.Working <= 0 || stuckAfter <= 0 || p.Still < stuckAfter {
		return ""
	}
	return fmt.Sprintf("working: %s s CPU in the last %s", cpuSeconds(p.Working), windowName(lease.CPUWindow))
}

// cpuSeconds is CPU time in seconds, to a tenth under ten seconds: a
// short burst that counts as work read "0 s CPU", which says it is not.
func cpuSeconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f", max(d.Seconds(), 0.1))
	}
	return fmt.Sprintf("%d", int(d.Round(time.Second)/time.Second))
}

// windowName is how the CPU window reads in a sentence.
func windowName(d time.Duration) string {
	if d == time.Minute {
		return "minute"
	}
	return d.String()
}
