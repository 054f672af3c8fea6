package coord

import (
	"fmt"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// paneSizes remembers the size a console last drew each task's pane at, so
// the pty always has the size of the pane that shows it: a session that is
// still being prepared when the console lays it out starts at that size
// instead of losing the request, and the next session of a task starts at
// the size its pane had. A task no console has drawn gets [pane]'s size.
//
// mu also orders ResizePane against a launch becoming live: either the
// resize finds the live session, or the launch finds the size it asked.
type paneSizes struct {
	mu   sync.Mutex
	want map[task.ID][2]int
}

// paneSize returns the size to start id's next session at.
func (c *Coordinator) paneSize(id task.ID) (cols, rows int) {
	c.sizes.mu.Lock()
	defer c.sizes.mu.Unlock()
	if sz, ok := c.sizes.want[id]; ok {
		return sz[0], sz[1]
	}
	return c.cfg.Pane.Cols, c.cfg.Pane.Rows
}

// ResizePane sets the size of the task's pane: the live session's pty and
// emulator now, and every later session of the task at its start. A size
// past [pane]'s maxima is held to them: the emulator allocates every cell,
// and a 100000x100000 pane asked by a client would run the engine out of
// memory.
func (c *Coordinator) ResizePane(id task.ID, cols, rows int) error {
	if cols <= 0 || rows <= 0 {
		return fmt.Errorf("resize the pane of task %s: size %dx%d is not positive", id.Short(), cols, rows)
	}
	cols, rows = min(cols, config.MaxPaneCols), min(rows, config.MaxPaneRows)
	c.sizes.mu.Lock()
	defer c.sizes.mu.Unlock()
	if c.sizes.want == nil {
		c.sizes.want = map[task.ID][2]int{}
	}
	c.sizes.want[id] = [2]int{cols, rows}
	w, ok := c.liveRun(id)
	if !ok {
		return nil // the launch applies it
	}
	return w.Resize(cols, rows)
}

// goLive publishes a launched session for Pane, Input and ResizePane, and
// gives it the size its pane was given while it was being prepared.
func (c *Coordinator) goLive(id task.ID, w worker.Handle) {
	c.sizes.mu.Lock()
	defer c.sizes.mu.Unlock()
	c.live.Store(id, w)
	if sz, ok := c.sizes.want[id]; ok {
		_ = w.Resize(sz[0], sz[1]) // an exited session reports its exit elsewhere
	}
}
