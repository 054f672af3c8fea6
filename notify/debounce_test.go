package notify

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// One pane stuck three times in 50 s is one alert; another session, another
// kind of news, or the same news after the window each go out.
func TestDebouncerHoldsBackRepeatsPerSession(t *testing.T) {
	t.Parallel()
	d := NewDebouncer(DebounceWindow)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stuck := Notice{Kind: KindStuck, TaskID: "01JQ8Z4TASK0000000000000AB", SessionID: "S1"}
	require.True(t, d.Allow(stuck, t0))
	require.False(t, d.Allow(stuck, t0.Add(20*time.Second)))
	require.False(t, d.Allow(stuck, t0.Add(50*time.Second)))

	other := stuck
	other.SessionID = "S2"
	require.True(t, d.Allow(other, t0.Add(50*time.Second)), "another session's pane")
	review := stuck
	review.Kind = KindAwaitingReview
	require.True(t, d.Allow(review, t0.Add(55*time.Second)), "other news about the same session")
	require.True(t, d.Allow(stuck, t0.Add(DebounceWindow+time.Second)), "the window has passed")

	noSession := Notice{Kind: KindFailed, TaskID: task.ID("01JQ8Z4TASK0000000000000AB")}
	require.True(t, d.Allow(noSession, t0))
	require.False(t, d.Allow(noSession, t0.Add(time.Second)), "keyed by task when no session")
}
