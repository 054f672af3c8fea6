package coord

import (
	"fmt"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// paneSizes remembers the size each console last drew each task's pane at,
// and decides the size the pane's pty has when several consoles show it,
// as tmux's window-size does ([pane] size): "latest" follows the console
// that last typed into or focused the pane (looking at it resizes
// nothing), "smallest" and "largest" take the least or greatest of every
// console's size. A console's asks go when it does (panes.Leave). A
// session still being prepared when a console lays it out starts at the
// decided size instead of losing the request, and the next session of a
// task starts at the size its pane had. A task no console has drawn gets
// [pane]'s size.
//
// mu also orders a resize against a launch becoming live: either the
// resize finds the live session, or the launch finds the size decided.
type paneSizes struct {
	mu    sync.Mutex
	want  map[task.ID][2]int             // the decided size of each pane
	asks  map[task.ID]map[string]paneAsk // each console's size, by viewer
	owner map[task.ID]string             // "latest": the console the pty follows
	seq   uint64
}

// paneAsk is one console's size for a pane; seq orders the asks, so the
// newest remaining console takes over when the owner leaves.
type paneAsk struct {
	size [2]int
	seq  uint64
}

// The viewer of the console that runs in the engine's own process, and of
// any caller that does not say which console it is.
const localViewer = ""

// start returns the size to start id's next session at: the decided
// size, else def ([pane]'s).
func (s *paneSizes) start(id task.ID, def [2]int) (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sz, ok := s.want[id]; ok {
		return sz[0], sz[1]
	}
	return def[0], def[1]
}

// ResizePane sets the size of the task's pane as the engine's own console
// draws it (panes.SizeFor says how the size is decided among consoles).
func (c *Coordinator) ResizePane(id task.ID, cols, rows int) error {
	_, _, err := panesOf(c).SizeFor(localViewer, id, cols, rows)
	return err
}

// goLive publishes a launched session in live (for Pane, Input and
// ResizePane), and gives it the size its pane was given while it was being
// prepared.
func (s *paneSizes) goLive(live *sync.Map, id task.ID, w worker.Handle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live.Store(id, w)
	if sz, ok := s.want[id]; ok {
		_ = w.Resize(sz[0], sz[1]) // an exited session reports its exit elsewhere
	}
}

// panes is the coordinator's pane sizing with each request naming the
// console (viewer) it came from; Opened serves it as ViewerEngine. It sees
// the sizes, the live sessions and the [pane] size policy.
type panes struct {
	sizes  *paneSizes
	live   *sync.Map // task.ID -> worker.Handle (Coordinator.live)
	policy string    // [pane] size
}

// panesOf is c's pane sizing.
func panesOf(c *Coordinator) panes {
	return panes{sizes: &c.sizes, live: &c.live, policy: c.cfg.Pane.Size}
}

// ViewerEngine is an engine that tells its consoles apart when it sizes
// panes (the engine's server names each connection a viewer).
type ViewerEngine interface {
	// SizePaneFor says viewer draws the task's pane at cols x rows and
	// returns the size the pane's pty has after it.
	SizePaneFor(viewer string, id task.ID, cols, rows int) (int, int, error)
	// InputFor types b into the task's live pane for viewer; no bytes
	// only focuses it.
	InputFor(viewer string, id task.ID, b []byte) error
	// LeaveViewer forgets viewer's sizes: its console has gone.
	LeaveViewer(viewer string)
}

// PaneSizer is an engine that answers a console's pane size with the
// size the pty took, so a console can mark a pane another console sized.
type PaneSizer interface {
	SizePane(id task.ID, cols, rows int) (int, int, error)
}

// SizePaneFor implements ViewerEngine.
func (o *Opened) SizePaneFor(viewer string, id task.ID, cols, rows int) (int, int, error) {
	return panesOf(o.Coordinator).SizeFor(viewer, id, cols, rows)
}

// InputFor implements ViewerEngine.
func (o *Opened) InputFor(viewer string, id task.ID, b []byte) error {
	return panesOf(o.Coordinator).InputFor(viewer, id, b)
}

// LeaveViewer implements ViewerEngine.
func (o *Opened) LeaveViewer(viewer string) { panesOf(o.Coordinator).Leave(viewer) }

// SizePane implements PaneSizer for the console in the engine's process.
func (o *Opened) SizePane(id task.ID, cols, rows int) (int, int, error) {
	return o.SizePaneFor(localViewer, id, cols, rows)
}

// SizeFor records that viewer draws the task's pane at cols x rows and
// returns the size the pane's pty has after it: viewer's own under
// "latest" when it owns the pane (the first console to draw a pane owns it
// until another types into it), the least or greatest of all under
// "smallest" and "largest". A size past [pane]'s maxima is held to them:
// the emulator allocates every cell, and a 100000x100000 pane asked by a
// client would run the engine out of memory.
func (p panes) SizeFor(viewer string, id task.ID, cols, rows int) (int, int, error) {
	if cols <= 0 || rows <= 0 {
		return 0, 0, fmt.Errorf("resize the pane of task %s: size %dx%d is not positive", id.Short(), cols, rows)
	}
	s := p.sizes
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asks == nil {
		s.asks, s.owner, s.want = map[task.ID]map[string]paneAsk{}, map[task.ID]string{}, map[task.ID][2]int{}
	}
	if s.asks[id] == nil {
		s.asks[id] = map[string]paneAsk{}
	}
	s.seq++
	s.asks[id][viewer] = paneAsk{size: [2]int{min(cols, config.MaxPaneCols), min(rows, config.MaxPaneRows)}, seq: s.seq}
	if _, ok := s.asks[id][s.owner[id]]; !ok {
		s.owner[id] = viewer
	}
	sz, err := p.apply(id)
	return sz[0], sz[1], err
}

// InputFor types b into the task's live pane for viewer; under "latest"
// the pane's pty takes viewer's size from now on. With no bytes it only
// focuses: the console's operator is about to type there.
func (p panes) InputFor(viewer string, id task.ID, b []byte) error {
	s := p.sizes
	s.mu.Lock()
	var err error
	if _, asked := s.asks[id][viewer]; asked && s.owner[id] != viewer {
		s.owner[id] = viewer
		_, err = p.apply(id)
	}
	s.mu.Unlock()
	if err != nil || len(b) == 0 {
		return err
	}
	w, ok := liveRun(p.live, id)
	if !ok {
		return fmt.Errorf("task %s has no live session", id.Short())
	}
	return w.Write(b)
}

// Leave forgets viewer's sizes: its console has gone. A pane it owned
// follows the console that drew it most recently.
func (p panes) Leave(viewer string) {
	s := p.sizes
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, asks := range s.asks {
		if _, ok := asks[viewer]; !ok {
			continue
		}
		delete(asks, viewer)
		if s.owner[id] == viewer {
			var newest paneAsk
			s.owner[id] = ""
			for v, a := range asks {
				if a.seq > newest.seq {
					newest, s.owner[id] = a, v
				}
			}
		}
		if len(asks) > 0 {
			_, _ = p.apply(id) // a session gone meanwhile reports its exit elsewhere
		}
	}
}

// apply decides the task's pane size from the asks and resizes its live
// session to it. s.mu is held.
func (p panes) apply(id task.ID) ([2]int, error) {
	s := p.sizes
	asks := s.asks[id]
	var sz [2]int
	switch p.policy {
	case "smallest", "largest":
		first := true
		for _, a := range asks {
			if first {
				sz, first = a.size, false
				continue
			}
			if p.policy == "smallest" {
				sz = [2]int{min(sz[0], a.size[0]), min(sz[1], a.size[1])}
			} else {
				sz = [2]int{max(sz[0], a.size[0]), max(sz[1], a.size[1])}
			}
		}
	default:
		sz = asks[s.owner[id]].size
	}
	s.want[id] = sz
	w, ok := liveRun(p.live, id)
	if !ok {
		return sz, nil // the launch applies it
	}
	return sz, w.Resize(sz[0], sz[1])
}
