package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// marksLabelled lists the labels of a recording's marks, in order.
func marksLabelled(rec coord.Recording) []string {
	var out []string
	for _, m := range rec.Marks {
		out = append(out, m.Label)
	}
	return out
}

// The engine's recording request serves a finished session's recording
// over the socket: its size, its output (replayed, the screen holds the
// correction the agent echoed) and the ledger's marks in order on its
// clock; a task with no recording is an error, not an empty replay.
func TestRecordingRequestServesASessionsRecordingAndMarks(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{
		AwaitDecision: true, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}},
	}}}})
	cl := b.dial(t, true)
	ch, unsub := cl.Subscribe()
	defer unsub()
	id := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	brief := waitEvent(t, ch, kindIs(task.EvBriefDelivered))
	const correction = "keep Add pure, replay me"
	res, err := cl.Do(context.Background(), coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: correction, Author: "test"})
	require.NoError(t, err)
	require.True(t, res.Delivered, res.Message)
	waitEvent(t, ch, func(ev task.Event) bool { return ev.Kind == task.EvSessionExited && ev.SessionID == brief.SessionID })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := cl.Recording(ctx, id, "")
	require.NoError(t, err)
	require.Equal(t, brief.SessionID, rec.SessionID, "the last recorded session")
	require.Equal(t, id, rec.TaskID)
	require.Equal(t, [2]int{80, 24}, [2]int{rec.Cols, rec.Rows}, "the pane's size, from the recording's header")
	require.Empty(t, rec.Damaged)
	require.NotEmpty(t, rec.Events)
	for _, e := range rec.Events {
		require.NotEqual(t, "i", e.Code, "input is not replayed")
	}
	screen := session.Replay(rec.Events, rec.Cols, rec.Rows)
	shown := ansi.Strip(strings.Join(screen.Scrollback(1000), "\n")) + "\n" + screen.Text()
	require.Contains(t, shown, "received human decision: "+correction, "the agent echoed the correction")

	labels := marksLabelled(rec)
	require.Subset(t, labels, []string{"brief", "correction", "sealed", "exited"}, "marks: %v", labels)
	at := map[string]float64{}
	for i, m := range rec.Marks {
		if i > 0 {
			require.GreaterOrEqual(t, m.At, rec.Marks[i-1].At, "marks in order: %v", rec.Marks)
		}
		require.GreaterOrEqual(t, m.At, 0.0)
		require.LessOrEqual(t, m.At, rec.Events[len(rec.Events)-1].Time)
		if _, ok := at[m.Label]; !ok {
			at[m.Label] = m.At
		}
	}
	require.Less(t, at["brief"], at["correction"], "the brief came before the correction")
	require.Positive(t, at["brief"], "on the recording's clock, not at its start: %v", rec.Marks)
	for _, m := range rec.Marks {
		if m.Label == "correction" {
			require.Contains(t, m.Text, correction)
		}
	}

	// The same session asked for by id.
	again, err := cl.Recording(ctx, id, brief.SessionID)
	require.NoError(t, err)
	require.Equal(t, rec.Events, again.Events)

	other := addCalc(t, cl, task.Pipeline{task.PhaseImplement})
	_, err = cl.Recording(ctx, task.ID(strings.ToLower(string(other))+"x"), "")
	require.Error(t, err)
	_, err = cl.Recording(ctx, id, "no-such-session")
	require.ErrorContains(t, err, "has no recorded session")
}

// A console attached to engine A replays a session engine B ran: the
// recording is in B's clone only, so A's relay asks B's engine for it.
func TestRelayServesAnotherEnginesRecording(t *testing.T) {
	t.Parallel()
	f := sessionOnB(t)
	// The brief is rendered and typed after the confirm, off B's loop: its
	// mark is in the recording once it was delivered, not before.
	waitEvent(t, f.notices, func(ev task.Event) bool {
		return ev.SessionID == f.confirmed.SessionID && ev.Kind == task.EvBriefDelivered
	})
	a := f.start("machine-a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := a.Opened.Recording(ctx, f.id, "")
	var away *coord.RecordingElsewhere
	require.ErrorAs(t, err, &away, "the recording is not on machine-a")
	require.Equal(t, f.b.Holder(), away.Holder)

	cl, err := Dial(ctx, a.Paths.Socket, Options{Version: "test", Kind: "console"})
	require.NoError(t, err)
	defer cl.Close()
	rec, err := cl.Recording(ctx, f.id, "")
	require.NoError(t, err)
	require.Equal(t, f.confirmed.SessionID, rec.SessionID)
	require.NotEmpty(t, rec.Events)
	screen := session.Replay(rec.Events, rec.Cols, rec.Rows)
	require.Contains(t, screen.Text(), strings.TrimSpace(agent.ReadyMarker), "machine-b's agent's screen")
	require.Contains(t, marksLabelled(rec), "brief")
}
