package coord

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A task whose session ended keeps the agent's final screen in its detail,
// replayed from the recording; a live one has none (its pane is live). A
// recording cut mid-line still gives the screen up to the cut.
func TestDetailHasTheLastSessionsFinalScreen(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	b := setupIn(t, root, agent.Script{}, nil, nil, nil)
	ctx := context.Background()
	id := b.addShellTask(t, "last", "say something")
	require.NoError(t, b.c.Input(id, []byte("echo LAST-$((6*7))\r")))
	b.waitPane(t, id, "LAST-42", 30*time.Second)

	d, err := b.c.Detail(ctx, id, DetailQuery{})
	require.NoError(t, err)
	require.Nil(t, d.LastScreen, "a live session's screen is its pane")

	_, err = b.c.Do(ctx, Command{Kind: CmdCancel, TaskID: id})
	require.NoError(t, err)
	b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionExited))
	d, err = b.c.Detail(ctx, id, DetailQuery{})
	require.NoError(t, err)
	require.NotNil(t, d.LastScreen, "%+v", d.Sessions)
	ls := d.LastScreen
	require.Equal(t, d.Sessions[len(d.Sessions)-1].ID, ls.SessionID)
	require.Contains(t, ls.Screen, "LAST-42")
	require.Positive(t, ls.Cols)
	require.Empty(t, ls.Damaged)
	cast := filepath.Join(root, d.Sessions[len(d.Sessions)-1].CastPath)

	d, err = b.c.Detail(ctx, id, DetailQuery{EventsOnly: true})
	require.NoError(t, err)
	require.Nil(t, d.LastScreen, "an events-only read skips the records")

	// Cut the recording inside its last line, as a killed writer would.
	data, err := os.ReadFile(cast)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cast, append(data, `[1.5, "o", "half a li`...), 0o600))
	d, err = b.c.Detail(ctx, id, DetailQuery{})
	require.NoError(t, err)
	require.NotNil(t, d.LastScreen)
	require.Contains(t, d.LastScreen.Screen, "LAST-42")
	require.Contains(t, d.LastScreen.Damaged, "line")
}
