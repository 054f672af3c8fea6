package headless

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var (
	at  = time.Date(2026, 11, 30, 19, 31, 7, 123e6, time.UTC)
	tid = task.ID("01KB5ZQ3M0N4V7T2X8Y9ZABCDE")
	ev  = task.Event{Seq: 7, TaskID: tid, SessionID: "01KB5ZQ3M0N4V7T2X8Y9SESS01", Kind: task.EvSessionLaunched, At: at,
		Text: "Session Y9SESS01 launched at 19:31:07 as pid 4242, commit 0123456789abcdef.", Data: json.RawMessage(`{"pid":4242}`)}
)

// The default form is for scripts: the real task id (which `correct` and
// `status` take) and the event's time, text untouched.
func TestRealLinesCarryTheIDsAndTimes(t *testing.T) {
	t.Parallel()
	line := New(nil, Real).Line(ev)
	require.Equal(t, "2026-11-30T19:31:07.123Z "+string(tid)+" session.launched                 "+ev.Text, line)
}

// The stable form renames everything that differs between two runs.
func TestStableLinesRenameWhatDiffersBetweenRuns(t *testing.T) {
	t.Parallel()
	p := New(nil, Stable)
	require.Equal(t, "T1   session.launched                 Session S1 launched at hh:mm:ss as pid N, commit sha1.", p.Line(ev))
}

// The JSON form is one object per line, parseable on its own, with the
// real ids, and survives event data that is not JSON.
func TestJSONLinesParseOneByOne(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := New(&buf, JSON)
	p.Print(ev)
	bad := ev
	bad.Data = json.RawMessage(`{not json`)
	p.Print(bad)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	for _, l := range lines {
		var r Record
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		require.Equal(t, "event", r.Type)
		require.Equal(t, tid, r.Task)
		require.Equal(t, ev.SessionID, r.Session)
		require.Equal(t, task.EvSessionLaunched, r.Kind)
		require.Equal(t, ev.Text, r.Text)
		require.True(t, at.Equal(*r.At))
		require.Equal(t, int64(7), r.Seq)
	}
	var first Record
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.JSONEq(t, `{"pid":4242}`, string(first.Data))
}

// A run that ends with a task held at rest says why on its verdict line:
// the program it waits for, which no event of the run may have printed.
func TestVerdictLineSaysWhyATaskIsHeld(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	flag := `Waiting for its program: The program "claude" of harness claude is not on the PATH`
	s := coord.Snapshot{Tasks: []coord.TaskView{{Task: task.Task{ID: tid, State: task.StateQueued, Phase: task.PhaseFrame}, Flag: flag}}}
	require.Equal(t, 1, Summary(&b, New(nil, Real), s))
	require.Equal(t, string(tid)+" verdict                          · no verdict yet (queued, phase frame) ⚑ "+flag+"\n", b.String())
}
