package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestRecordingMarksPlacesTheLedgerOnTheRecordingsClock(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 500_000_000, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	evs := []task.Event{
		{SessionID: "s1", Kind: task.EvBriefDelivered, Text: "brief", At: at(1.25)},
		{SessionID: "s1", Kind: task.EvLeaseRenewed, At: at(2)},      // not a mark
		{SessionID: "s0", Kind: task.EvDecisionDelivered, At: at(2)}, // another session's
		{SessionID: "s1", Kind: task.EvDecisionDelivered, Text: "keep Add pure", At: at(3.5)},
		{SessionID: "s1", Kind: task.EvRefusal, Reason: task.ReasonRenewalCap, At: at(4)},
		{SessionID: "s1", Kind: task.EvRefusal, Reason: task.ReasonVerifyFailing, At: at(4.5)},
		{SessionID: "s1", Kind: task.EvSessionExited, At: at(99)}, // past the end
	}
	casts := []session.CastEvent{{Time: 0.5, Code: "o", Data: "a"}, {Time: 3.75, Code: "m", Data: "cut"}, {Time: 6, Code: "o", Data: "b"}}
	ms := RecordingMarks(evs, casts, "s1", start)
	var got []string
	for _, m := range ms {
		got = append(got, m.Label)
	}
	require.Equal(t, []string{"brief", "correction", "marker", "renewal refused", "exited"}, got)
	require.InDelta(t, 1.25, ms[0].At, 1e-9)
	require.InDelta(t, 3.5, ms[1].At, 1e-9)
	require.Equal(t, "keep Add pure", ms[1].Text)
	require.InDelta(t, 6, ms[4].At, 1e-9, "a mark past the end is placed at the end")
}
