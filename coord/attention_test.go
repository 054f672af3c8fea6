package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Attention is the engine's flag first; an ended task's reason code reads
// as words, a sentence as it is; a limit's flag counts down to the reset.
func TestAttention(t *testing.T) {
	t.Parallel()
	failed := TaskView{Task: task.Task{State: task.StateFailed, Reason: string(task.ReasonAttemptsExhausted)}}
	require.Equal(t, "attempts exhausted", Attention(failed))
	parked := TaskView{Task: task.Task{State: task.StateParked, Reason: "budget: $0.0525 of $0.0500 spent"}}
	require.Equal(t, "budget: $0.0525 of $0.0500 spent", Attention(parked))
	queued := TaskView{Task: task.Task{State: task.StateQueued, Reason: "x"}}
	require.Empty(t, Attention(queued))
	now := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	limited := TaskView{Task: task.Task{State: task.StateQueued}, Flag: FlagLimited + "resets at 9:02.", LimitReset: now.Add(89 * time.Second)}
	require.Equal(t, "⏳ 01:29 "+FlagLimited+"resets at 9:02.", AttentionAt(limited, now))
	require.Equal(t, "⏳ 00:00 "+FlagLimited+"resets at 9:02.", AttentionAt(limited, now.Add(time.Hour)), "past the reset")
}
