package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestFleetReplayInTheConsole is TestReplayInTheConsole on a fleet (issue
// 24): machine-b's engine runs the session, a console attached to
// machine-a's engine types the correction and, once the task waits for
// review, replays the session with w. The recording is only in
// machine-b's clone, so machine-a fetches it from machine-b's engine; [
// jumps back to the correction's mark, and the pane shows exactly the
// screen machine-b's recording replayed by the emulator alone gives at
// the offset of the correction's ledger event.
func TestFleetReplayInTheConsole(t *testing.T) {
	parallel(t)
	f := newFleetWith(t, []string{"machine-a", "machine-b"}, 1, agent.Script{PaceMS: new(int), Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{AwaitDecision: true, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}})
	ctx := context.Background()
	// Only machine-b runs when the task comes, so machine-b holds it.
	f.start(t, "machine-b")
	id := f.add(t, "machine-b", 1)[0]
	b := f.engineOf(t, "machine-b")
	f.waitStore(t, 3*time.Minute, "machine-b runs the session", func() bool {
		ss, err := f.st.SessionList(ctx, id)
		require.NoError(t, err)
		return len(ss) == 1 && ss[0].Status == store.SessionConfirmed && ss[0].Holder == b.ID
	})
	f.start(t, "machine-a")

	a := f.engines["machine-a"]
	tm := startTerm(t, "cd "+shellQuote(a.dir)+" && "+shellQuote(f.bin)+`; echo "console exited with status $?"; exec sleep 3600`,
		coord.StoreURLEnv+"="+f.url, "COLORTERM=truecolor", "USER=operator")
	tm.waitText(time.Minute, "fleet 1", strings.TrimSpace(agent.ReadyMarker))
	// The agent has read its brief (see TestReplayInTheConsole).
	tm.waitText(90*time.Second, "● Phase implement, attempt 1")
	const correction = "from machine-a: keep Add pure"
	tm.answer("c", correction, 5*time.Second, "correction: ")
	tm.waitText(2*time.Minute, "1 awaiting review")

	s := replayToCorrection(t, tm, correction)

	evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
	require.NoError(t, err)
	var delivered task.Event
	for _, ev := range evs {
		if ev.Kind == task.EvDecisionDelivered {
			delivered = ev
		}
	}
	require.NotEmpty(t, delivered.SessionID, "the correction was delivered")
	ss, err := f.st.SessionList(ctx, id)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	require.Equal(t, ss[0].ID, delivered.SessionID)
	require.Equal(t, b.ID, ss[0].Holder, "machine-b ran the session the console replays")
	here, err := filepath.Glob(filepath.Join(a.dir, ".orchestra", "runs", "*", delivered.SessionID+".cast"))
	require.NoError(t, err)
	require.Empty(t, here, "the recording is in machine-b's clone only")
	// The recording as the pane shows it: at the size machine-b's pty had
	// at that moment (the console's pane size reaches it over the relay,
	// and a correction typed quickly may be delivered before), cut or
	// padded to the pane and marked so.
	want, size, offset := castScreenAt(t, f.engines["machine-b"].dir, delivered.SessionID, delivered.At)
	require.True(t, replayShows(s, termCols, want, size), "the replayed pane is machine-b's recording (%dx%d) at %.3f s:\nwant\n%s\nscreen\n%s",
		size[0], size[1], offset, strings.Join(want, "\n"), s)
	tm.keys("q")
	tm.waitScreen("the replay left", 10*time.Second, func(s string) bool { return !strings.Contains(s, "REPLAY") })
}
