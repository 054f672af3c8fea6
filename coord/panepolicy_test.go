package coord

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Two consoles show one pane, as tmux's window-size decides it: under
// "latest" the pty follows the console that last typed into or focused
// the pane, and looking at it (laying it out) resizes nothing; when that
// console goes, the pane follows the one left. "smallest" and "largest"
// take the least or greatest of both.
func TestPaneSizePolicyAmongConsoles(t *testing.T) {
	t.Parallel()
	size := func(policy string) panes {
		cfg := config.Default()
		cfg.Pane.Size = policy
		return panesOf(&Coordinator{cfg: cfg})
	}
	const id = task.ID("T1")
	took := func(p panes, viewer string, cols, rows int) [2]int {
		t.Helper()
		c, r, err := p.SizeFor(viewer, id, cols, rows)
		require.NoError(t, err)
		return [2]int{c, r}
	}

	p := size("latest")
	require.Equal(t, [2]int{200, 50}, took(p, "A", 200, 50), "the first console to draw the pane sizes it")
	require.Equal(t, [2]int{200, 50}, took(p, "B", 120, 40), "a second console only looking resizes nothing")
	require.NoError(t, p.InputFor("B", id, nil), "focus")
	require.Equal(t, [2]int{120, 40}, took(p, "B", 120, 40), "the console that focused it sizes it")
	require.Equal(t, [2]int{120, 40}, took(p, "A", 210, 52), "the other console's own resize waits")
	require.Error(t, p.InputFor("A", id, []byte("x")), "no live session to type into")
	require.Equal(t, [2]int{210, 52}, took(p, "B", 120, 40), "typing claimed it for A, even with no session yet")
	p.Leave("A")
	cols, rows := p.sizes.start(id, [2]int{1, 1})
	require.Equal(t, [2]int{120, 40}, [2]int{cols, rows}, "A gone, the pane follows B")
	require.NoError(t, p.InputFor("C", id, nil), "a console that never drew the pane claims nothing")
	require.Equal(t, [2]int{120, 40}, took(p, "B", 120, 40))

	p = size("smallest")
	took(p, "A", 200, 50)
	require.Equal(t, [2]int{120, 50}, took(p, "B", 120, 60))
	p = size("largest")
	took(p, "A", 200, 30)
	require.Equal(t, [2]int{200, 60}, took(p, "B", 120, 60))
	p.Leave("B")
	cols, rows = p.sizes.start(id, [2]int{1, 1})
	require.Equal(t, [2]int{200, 30}, [2]int{cols, rows})
}
