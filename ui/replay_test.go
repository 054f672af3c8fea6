package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// castRecording is an agent's session as its recording has it: a
// prompt, the brief echoed, work, a resize, the correction typed in and
// answered, a long silence, and the end; the ledger's marks on its
// clock.
func castRecording() coord.Recording {
	evs := []session.CastEvent{
		{Time: 0.2, Code: "o", Data: "\x1b[1mscripted agent\x1b[0m ready\r\n> "},
		{Time: 0.9, Code: "o", Data: "brief: fix calc\r\n"},
		{Time: 1.4, Code: "o", Data: "\x1b[36m●\x1b[0m reading calc.go\r\n"},
		{Time: 2.0, Code: "r", Data: "50x12"},
		{Time: 2.1, Code: "o", Data: "\x1b[2J\x1b[H\x1b[32m+\x1b[0m return a + b\r\n"},
		{Time: 3.5, Code: "o", Data: "received human decision: keep Add pure\r\n"},
		{Time: 3.6, Code: "o", Data: "\x1b[33mok\x1b[0m, keeping it pure\r\n"},
		{Time: 60, Code: "o", Data: "done\r\n"},
	}
	return coord.Recording{TaskID: fixtureID(2), SessionID: "S2", Cols: 40, Rows: 10, Events: evs, Marks: []coord.Mark{
		{At: 0.9, Kind: task.EvBriefDelivered, Label: "brief"},
		{At: 3.5, Kind: task.EvDecisionDelivered, Label: "correction", Text: "keep Add pure"},
		{At: 30, Kind: task.EvSessionStuck, Label: "stuck", Text: "the pane is still"},
		{At: 60, Kind: task.EvSessionExited, Label: "exited", Text: "exit 0"},
	}}
}

// castAt is the screen the recording's events up to offset at give,
// replayed by the emulator alone.
func castAt(rec coord.Recording, at float64) string {
	return session.Replay(eventsTo(rec, at), rec.Cols, rec.Rows).Render()
}

// eventsTo are the recording's events up to offset at.
func eventsTo(rec coord.Recording, at float64) []session.CastEvent {
	var evs []session.CastEvent
	for _, e := range rec.Events {
		if e.Time <= at {
			evs = append(evs, e)
		}
	}
	return evs
}

// fakeTicks is the replay's clock: tick records what the replay asked
// for, fire delivers the newest at a moment of the test's choosing.
type fakeTicks struct {
	now   time.Time
	waits []time.Duration
	fn    func(time.Time) tea.Msg
}

func (f *fakeTicks) tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	f.waits = append(f.waits, d)
	f.fn = fn
	return func() tea.Msg { return nil }
}

// after moves the clock d on and delivers the pending tick, if any.
func (f *fakeTicks) after(r *replay, d time.Duration) {
	f.now = f.now.Add(d)
	if f.fn == nil {
		return
	}
	fn := f.fn
	f.fn = nil
	r.update(fn(f.now).(replayTickMsg))
}

// openLoaded opens a replay of rec on a stub engine and delivers it.
func openLoaded(t *testing.T, rec coord.Recording, clock *fakeTicks) *replay {
	t.Helper()
	e := newStubEngine(testNow)
	e.recordings = map[task.ID]map[string]coord.Recording{rec.TaskID: {"": rec, rec.SessionID: rec}}
	st := newStyles()
	r, load := openReplay(e, &st, func() time.Time { return clock.now }, clock.tick, rec.TaskID, "", nil)
	msg := load()
	require.IsType(t, replayLoadedMsg{}, msg)
	r.update(msg.(replayLoadedMsg))
	require.NoError(t, r.err)
	return r
}

func press(t *testing.T, r *replay, keys ...string) {
	t.Helper()
	for _, k := range keys {
		cmd, leave := r.key(keyMsg(k))
		require.False(t, leave, "key %q left the replay", k)
		if cmd != nil {
			if msg, ok := cmd().(replayMsg); ok {
				r.update(msg)
			}
		}
	}
}

// Jumping to a mark shows the screen of that moment: the same screen as
// the cast replayed by the emulator to the mark's offset, going forward,
// going back (a replay from the start) and stepping.
func TestReplaySeekToAMarkIsTheCastAtThatOffset(t *testing.T) {
	t.Parallel()
	rec := castRecording()
	clock := &fakeTicks{now: testNow}
	r := openLoaded(t, rec, clock)
	require.True(t, r.playing, "a replay plays as it opens")

	press(t, r, "]")
	require.False(t, r.playing, "a jump pauses on the mark")
	require.Equal(t, 0, r.mark)
	require.Equal(t, 0.9, r.pos)
	require.Equal(t, castAt(rec, 0.9), r.term.Render())

	press(t, r, "]")
	require.Equal(t, "correction", rec.Marks[r.mark].Label)
	require.Equal(t, castAt(rec, 3.5), r.term.Render())
	require.Contains(t, r.term.Text(), "received human decision: keep Add pure")
	require.NotContains(t, r.term.Text(), "keeping it pure", "the moment of the mark, not after it")
	cols, rows := r.term.Size()
	require.Equal(t, [2]int{50, 12}, [2]int{cols, rows}, "the resize before the mark is replayed")

	press(t, r, "]", "]")
	require.Equal(t, "exited", rec.Marks[r.mark].Label)
	require.Equal(t, castAt(rec, 60), r.term.Render())
	press(t, r, "]")
	require.Equal(t, 3, r.mark, "no mark after the last")

	// Back to the brief: replayed from the start.
	press(t, r, "[", "[", "[")
	require.Equal(t, 0, r.mark)
	require.Equal(t, castAt(rec, 0.9), r.term.Render())

	// A step applies the next event; a step back undoes it.
	press(t, r, ".")
	require.Equal(t, 1.4, r.pos)
	require.Equal(t, castAt(rec, 1.4), r.term.Render())
	press(t, r, ".", ".")
	require.Equal(t, castAt(rec, 2.1), r.term.Render())
	press(t, r, ",")
	require.Equal(t, castAt(rec, 2.0), r.term.Render())
	press(t, r, "0")
	require.Equal(t, castAt(rec, 0), r.term.Render())
	press(t, r, "5")
	require.Equal(t, castAt(rec, 30), r.term.Render())
}

// A recording is shown at the size it was recorded at, at the playhead
// (a resize in it replayed): in a pane of another size it is cut or
// padded, row for row the cast's, and its last row says the recorded
// size; in a pane of its own size it is the cast's screen unmarked.
func TestReplayShowsTheRecordedSize(t *testing.T) {
	t.Parallel()
	rec := castRecording()
	r := openLoaded(t, rec, &fakeTicks{now: testNow})
	plain := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = strings.TrimRight(ansi.Strip(l), " ")
		}
		return out
	}
	check := func(at float64, w, h int, mark string) {
		t.Helper()
		want := strings.Split(session.Replay(eventsTo(rec, at), rec.Cols, rec.Rows).Text(), "\n")
		got := r.screen(w, h)
		require.Len(t, got, h)
		for i, l := range got {
			require.Equal(t, w, ansi.StringWidth(l), "row %d is %d cells wide in a %dx%d pane", i, ansi.StringWidth(l), w, h)
		}
		rows := plain(got)
		last := h
		if mark != "" {
			last = h - 1
			require.True(t, strings.HasSuffix(rows[h-1], strings.TrimRight(mark, " ")), "the last row says %q: %q", mark, rows[h-1])
		} else {
			require.NotContains(t, strings.Join(rows, "\n"), "recorded at", "a screen at its own size is not marked")
		}
		// The cursor stays in the top rows here: the screen's top is shown.
		for i := range last {
			cast := ""
			if i < len(want) {
				cast = strings.TrimRight(ansi.Truncate(want[i], w, ""), " ")
			}
			require.Equal(t, cast, rows[i], "row %d at %.1f s in a %dx%d pane", i, at, w, h)
		}
	}
	press(t, r, "]") // the brief, at 40x10
	check(0.9, 40, 10, "")
	check(0.9, 30, 8, " recorded at 40x10 ")
	check(0.9, 60, 14, " recorded at 40x10 ")
	press(t, r, "]") // the correction, after the resize to 50x12
	check(3.5, 50, 12, "")
	check(3.5, 40, 10, " recorded at 50x12 ")
	check(3.5, 12, 5, " 50x12 ")
}

// A seek that feeds more output than Update should builds its screen off
// Update: the command's answer is the cast at that offset.
func TestReplayLongSeekIsBuiltOffUpdate(t *testing.T) {
	t.Parallel()
	rec := castRecording()
	line := strings.Repeat("x", 1023) + "\n"
	var flood []session.CastEvent
	for i := range 1200 {
		flood = append(flood, session.CastEvent{Time: 4 + float64(i)/1000, Code: "o", Data: fmt.Sprintf("%04d", i) + line})
	}
	rec.Events = append(append(append([]session.CastEvent(nil), rec.Events[:7]...), flood...), rec.Events[7])
	clock := &fakeTicks{now: testNow}
	r := openLoaded(t, rec, clock)
	cmd, _ := r.key(keyMsg("end"))
	require.NotNil(t, cmd, "over a MiB to feed: built by a command")
	require.NotZero(t, r.seeking)
	require.Contains(t, r.statusLine(80, false), "seeking")
	r.update(cmd().(replaySeekMsg))
	require.Zero(t, r.seeking)
	require.Equal(t, castAt(rec, 60), r.term.Render())
	press(t, r, "[") // the stuck mark, before the flood's end: from the start again
	require.Equal(t, "stuck", rec.Marks[r.mark].Label)
	require.Equal(t, castAt(rec, 30), r.term.Render())
}

// Play, pause, step and speed on a fake clock: the playhead moves by the
// clock's time times the speed, a tick of a paused run moves nothing, and
// a silence longer than replayIdle plays as replayIdle.
func TestReplayPlaysOnAFakeClock(t *testing.T) {
	t.Parallel()
	rec := castRecording()
	clock := &fakeTicks{now: testNow}
	r := openLoaded(t, rec, clock)
	require.Len(t, clock.waits, 1)
	require.Equal(t, 200*time.Millisecond, clock.waits[0], "the first tick is due with the first event")

	clock.after(r, 600*time.Millisecond)
	require.InDelta(t, 0.6, r.pos, 1e-9)
	require.Equal(t, castAt(rec, 0.6), r.term.Render())
	require.Equal(t, replayMaxWait, clock.waits[len(clock.waits)-1], "the next event is 0.3 s away: the clock's own bound")

	// Paused, a tick already asked for moves nothing.
	pending := clock.fn
	press(t, r, "space")
	require.False(t, r.playing)
	clock.now = clock.now.Add(time.Second)
	r.update(pending(clock.now).(replayTickMsg))
	require.InDelta(t, 0.6, r.pos, 1e-9, "a stale tick is dropped")

	// Faster: 4x. A second of the clock is four of the recording.
	press(t, r, ">", "+")
	require.Equal(t, 4.0, replaySpeeds[r.speed])
	press(t, r, ">", ">", ">")
	require.Equal(t, 16.0, replaySpeeds[r.speed], "16x is the fastest")
	press(t, r, "<", "-")
	require.Equal(t, 4.0, replaySpeeds[r.speed])
	press(t, r, "space")
	clock.after(r, 500*time.Millisecond)
	require.InDelta(t, 2.6, r.pos, 1e-9)
	require.Equal(t, castAt(rec, 2.6), r.term.Render())
	require.Contains(t, ansi.Strip(r.statusLine(100, false)), "▶ playing · 4x · 0:02.6 / 1:00.0")

	// After 3.6 s the recording is silent until 60 s: at 4x the silence
	// plays as replayIdle seconds of the recording, half a second.
	clock.after(r, 250*time.Millisecond) // 3.6
	require.InDelta(t, 3.6, r.pos, 1e-9)
	clock.after(r, 250*time.Millisecond) // 4.6: one second into the silence
	require.InDelta(t, 4.6, r.pos, 1e-9)
	clock.after(r, 400*time.Millisecond) // 6.2: 2.6 s into it, so 0.6 s past the cut
	require.InDelta(t, 60, r.pos, 1e-9, "the silence is cut; the recording ends at 60 s")
	require.False(t, r.playing, "the end pauses")
	require.Contains(t, ansi.Strip(r.statusLine(100, false)), "■ end")
	require.Equal(t, castAt(rec, 60), r.term.Render())

	// Space at the end plays it again from the start.
	press(t, r, "space")
	require.True(t, r.playing)
	require.Zero(t, r.pos)
	require.Equal(t, castAt(rec, 0), r.term.Render())
}

// A damaged recording plays up to the damage and says where it stopped.
func TestReplayOfADamagedRecordingSaysSo(t *testing.T) {
	t.Parallel()
	rec := castRecording()
	rec.Events = rec.Events[:6]
	rec.Damaged = "read recording line 8: event is not a JSON array: unexpected end of JSON input; the replay stops there"
	clock := &fakeTicks{now: testNow}
	r := openLoaded(t, rec, clock)
	press(t, r, "end")
	require.Equal(t, castAt(rec, 3.5), r.term.Render())
	strips := ansi.Strip(strings.Join(r.strips(100, 3), "\n"))
	require.Contains(t, strips, "╳ damaged: read recording line 8")
	require.Contains(t, ansi.Strip(r.statusLine(100, true)), "╳ damaged", "without a row of its own the status says it")
}

// The console opens the replay on w over the selected task, in the Live
// tab's pane: the timeline and the player's state where the lease and
// verdict strips were, the recording's screen below; ] goes to the
// correction; q leaves. Every line fits at 80x24, 100x30 and 200x50.
func TestReplayInTheConsole(t *testing.T) {
	t.Parallel()
	rec := castRecording()
	for _, size := range [][2]int{{80, 24}, {100, 30}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(e *stubEngine) {
				everyState(e)
				e.recordings = map[task.ID]map[string]coord.Recording{fixtureID(2): {"": rec}}
				d := e.details[fixtureID(2)]
				d.Sessions = []store.Session{
					{ID: "S1", Phase: task.PhasePlan, Attempt: 1, CastPath: "runs/x/S1.cast"},
					{ID: "S2", Phase: task.PhaseImplement, Attempt: 1, CastPath: "runs/x/S2.cast"},
				}
				e.details[fixtureID(2)] = d
			}).size(size[0], size[1])
			b.selectState(task.StateRunning)
			b.press("w")
			require.Equal(t, modeReplay, b.m.mode)
			b.press("]", "]")
			v := b.view()
			lines := strings.Split(v, "\n")
			require.Len(t, lines, size[1])
			for i, l := range lines {
				require.Equal(t, size[0], ansi.StringWidth(l), "line %d overflows or is short: %q", i, ansi.Strip(l))
			}
			plain := ansi.Strip(v)
			require.Contains(t, plain, "❚❚ paused · 1x · 0:03.5 / 1:00.0")
			require.Contains(t, plain, "◆ correction 2/4")
			require.Contains(t, plain, "2/2 implement #1")
			require.Contains(t, plain, "received human decision: keep Add pure")
			require.Contains(t, plain, "REPLAY · esc to leave")
			require.Contains(t, plain, "space play/pause")
			b.press("q")
			require.Equal(t, modeNormal, b.m.mode)
			require.Nil(t, b.m.rp)
			require.NotContains(t, ansi.Strip(b.view()), "REPLAY")
		})
	}
}

// { and } replay the task's other sessions; an engine that cannot serve
// recordings says so.
func TestReplaySwitchesSessions(t *testing.T) {
	t.Parallel()
	rec := castRecording()
	first := coord.Recording{TaskID: rec.TaskID, SessionID: "S1", Cols: 20, Rows: 4,
		Events: []session.CastEvent{{Time: 0.1, Code: "o", Data: "the plan session"}}}
	b := setup(t, func(e *stubEngine) {
		everyState(e)
		e.recordings = map[task.ID]map[string]coord.Recording{fixtureID(2): {"": rec, "S2": rec, "S1": first}}
		d := e.details[fixtureID(2)]
		d.Sessions = []store.Session{
			{ID: "S1", Phase: task.PhasePlan, Attempt: 1, CastPath: "runs/x/S1.cast"},
			{ID: "S0", Phase: task.PhasePlan, Attempt: 1},
			{ID: "S2", Phase: task.PhaseImplement, Attempt: 1, CastPath: "runs/x/S2.cast"},
		}
		e.details[fixtureID(2)] = d
	}).size(120, 40)
	b.selectState(task.StateRunning)
	b.press("w", "{", "end")
	plain := ansi.Strip(b.view())
	require.Contains(t, plain, "1/2 plan #1", "the session without a recording is not listed")
	require.Contains(t, plain, "the plan session")
	b.press("}", "end")
	require.Contains(t, ansi.Strip(b.view()), "2/2 implement #1")
	require.Contains(t, ansi.Strip(b.view()), "done")
}
