package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The components work without the root model: each is handed what it
// needs and draws exactly the area it is given.

func TestTaskListOrdersAndDrawsWithoutTheRootModel(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	var tl taskList
	tl.take(e.snap, testNow)
	vis := tl.visible()
	require.Len(t, vis, len(e.snap.Tasks), "the filter lets everything through")
	require.True(t, needsHuman(vis[0]), "tasks that need a human come first")

	sel := vis[2].Task.ID
	lines := tl.render(rowView{st: newStyles(), sel: sel, now: testNow, snapAt: e.snap.At}, 90, 6)
	require.Len(t, lines, 6)
	for _, l := range lines {
		require.Equal(t, 90, ansi.StringWidth(l), "%q", l)
	}
	// Title, header, then rows 0..3: the selection is the third row.
	require.True(t, strings.HasPrefix(ansi.Strip(lines[4]), "▸"), "the selected row is marked: %q", ansi.Strip(lines[4]))
	require.False(t, strings.HasPrefix(ansi.Strip(lines[3]), "▸"))

	tl.filter = filterEnded
	tl.rebuild(testNow)
	for _, tv := range tl.visible() {
		require.True(t, tv.Task.State.Terminal(), "%s", tv.Task.State)
	}
}

func TestTaskListHoldsItsOrderUntilTheHoldEnds(t *testing.T) {
	t.Parallel()
	at := testNow
	s := coord.Snapshot{At: at, Gen: 1, Tasks: []coord.TaskView{
		{Task: task.Task{ID: "A", State: task.StateCompleted, UpdatedAt: at.Add(-2 * time.Minute)}},
		{Task: task.Task{ID: "B", State: task.StateCompleted, UpdatedAt: at.Add(-time.Minute)}},
	}}
	var tl taskList
	tl.take(s, at)
	require.Equal(t, task.ID("B"), tl.visible()[0].Task.ID, "the most recent first")

	end := tl.hold(at)
	s.Gen, s.Tasks[0].Task.UpdatedAt = 2, at // A becomes the most recent
	tl.take(s, at.Add(time.Second))
	require.Equal(t, task.ID("B"), tl.visible()[0].Task.ID, "held: the rows keep their order")

	require.False(t, tl.endHold(holdEndMsg{until: end.until.Add(-time.Second)}, at), "a stale end does not end a later hold")
	require.True(t, tl.endHold(end, at.Add(listHold)))
	require.Equal(t, task.ID("A"), tl.visible()[0].Task.ID, "the list re-sorts once the hold ends")
}

func TestConfirmationAnswersOnlyYesOrNo(t *testing.T) {
	t.Parallel()
	ran := false
	c := confirmation{prompt: "go? y/n", yes: func() tea.Cmd { ran = true; return nil }}

	yes, answered, status := c.answer("x")
	require.Nil(t, yes)
	require.False(t, answered, "a stray key does not answer")
	require.Contains(t, status, "x does not answer")
	require.Equal(t, "go? y/n", c.prompt, "the question stays")

	yes, answered, _ = c.answer("y")
	require.True(t, answered)
	require.NotNil(t, yes)
	require.False(t, ran, "answer hands yes back; the root model runs it")
	yes()
	require.True(t, ran)
	require.Empty(t, c.prompt, "answered: the question is gone")

	c = confirmation{prompt: "go? y/n", declined: "not gone: it stays", yes: func() tea.Cmd { ran = false; return nil }}
	yes, answered, status = c.answer("esc")
	require.Nil(t, yes)
	require.True(t, answered)
	require.Equal(t, "not gone: it stays", status, "no says what was left undone")
}
