package notify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Exactly the events that leave a task waiting for a human notify: review,
// stuck, failed, and the refusals the engine cannot get past alone; the
// routine ones (heartbeats, an invalid artifact typed back) do not.
func TestForPicksTheEventsThatNeedAHuman(t *testing.T) {
	t.Parallel()
	for _, k := range task.Kinds {
		ev := task.Event{Kind: k, TaskID: "01JQ8Z4TASK0000000000000AB"}
		n, ok := For(ev)
		switch k {
		case task.EvTaskAwaiting:
			require.True(t, ok)
			require.Equal(t, KindAwaitingReview, n.Kind)
		case task.EvTaskFailed:
			require.True(t, ok)
			require.Equal(t, KindFailed, n.Kind)
		case task.EvMergeReturned:
			// The queue sent it back by itself: the operator is told.
			require.True(t, ok)
			require.Equal(t, KindReturned, n.Kind)
		case task.EvBudgetDayReached:
			// Placement stopped for the day: only the operator raises it.
			require.True(t, ok)
			require.Equal(t, KindBudget, n.Kind)
		case task.EvSessionLimited:
			// The provider's limit holds the task until its reset: the
			// operator is told once (the event is recorded once a limit).
			require.True(t, ok)
			require.Equal(t, KindLimited, n.Kind)
		default:
			require.False(t, ok, "%s alone does not need a human", k)
		}
	}
	for _, r := range []task.Reason{task.ReasonRenewalNoProgress, task.ReasonArtifactSchema, task.ReasonLeaseExpired, task.ReasonVerifyFailing, task.ReasonStaleLeaseToken} {
		_, ok := For(task.Event{Kind: task.EvRefusal, Reason: r})
		require.False(t, ok, "%s resolves itself", r)
	}
	// A park notifies only when the budget did it, not the operator.
	n, ok := For(task.Event{Kind: task.EvTaskParked, Reason: task.ReasonTaskBudget, TaskID: "01JQ8Z4TASK0000000000000AB"})
	require.True(t, ok)
	require.Equal(t, KindBudget, n.Kind)
	require.Contains(t, n.Headline(), "spent its budget")
	n, ok = For(task.Event{Kind: task.EvBudgetDayReached})
	require.True(t, ok)
	require.Equal(t, "the day's budget is spent: nothing new starts", n.Headline())
	n, ok = For(task.Event{Kind: task.EvRefusal, Reason: task.ReasonStuck})
	require.True(t, ok)
	require.Equal(t, KindStuck, n.Kind)
	for _, r := range []task.Reason{task.ReasonUnplaceable, task.ReasonMergeConflict, task.ReasonWorktreeFailed} {
		n, ok := For(task.Event{Kind: task.EvRefusal, Reason: r})
		require.True(t, ok, "%s waits for a human", r)
		require.Equal(t, KindRefused, n.Kind)
	}
}

// The terminal gets the bell and both OSC notifications, and nothing a
// task's title smuggles in: no escape, no BEL ending the OSC early.
func TestTerminalRingsAndNotifiesWithCleanText(t *testing.T) {
	t.Parallel()
	n := Notice{Kind: KindStuck, TaskID: "01JQ8Z4TASK0000000000000AB", Title: "fix\x1b]52;c;ZXZpbA==\x07 login\x07\u009b2J", Text: "The pane\nstopped."}
	out := Terminal(n, true, true)
	require.True(t, strings.HasPrefix(out, "\a"), "the bell first: %q", out)
	require.Contains(t, out, "\x1b]9;task 000000AB “fix login” is stuck: The pane stopped.\a")
	require.Contains(t, out, "\x1b]777;notify;orchestra-tui;task 000000AB “fix login” is stuck: The pane stopped.\a")
	require.NotContains(t, out, "52;", "the title's OSC 52 is gone")
	require.Equal(t, 3, strings.Count(out, "\a"), "one bell and one terminator per OSC: %q", out)
	require.Equal(t, "\a", Terminal(n, true, false))
	require.True(t, strings.HasPrefix(Terminal(n, false, true), "\x1b]9;"), "no bell without Bell")
	require.Empty(t, Terminal(n, false, false))
}

// The command gets the notice as JSON on its standard input and in
// $ORCHESTRA_NOTICE; a failing command says what it printed.
func TestRunGivesTheCommandTheNoticeAsJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := Notice{Kind: KindAwaitingReview, TaskID: "01JQ8Z4TASK0000000000000AB", Title: "fix login", Text: "ready", Event: task.EvTaskAwaiting, At: time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)}
	script := `cat > stdin.json; printf '%s' "$ORCHESTRA_NOTICE" > env.json`
	require.NoError(t, Run(context.Background(), []string{"sh", "-c", script}, dir, nil, n))
	for _, f := range []string{"stdin.json", "env.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		var got Notice
		require.NoError(t, json.Unmarshal(data, &got), "%s: %s", f, data)
		require.Equal(t, n, got, f)
	}
	err := Run(context.Background(), []string{"sh", "-c", "echo no display; exit 3"}, dir, nil, n)
	require.ErrorContains(t, err, "exit status 3")
	require.ErrorContains(t, err, "no display")
}
