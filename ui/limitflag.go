package ui

import (
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// limitFlag is a task's flag with the countdown to its provider's limit
// reset in front, at now (coord.AttentionAt: `status` says the same).
func limitFlag(tv coord.TaskView, now time.Time) string { return coord.AttentionAt(tv, now) }

// taskFlag is the attention mark of a task (coord.Attention).
func taskFlag(tv coord.TaskView) string { return coord.Attention(tv) }
