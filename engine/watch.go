package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// snapEvery is how often a watcher's snapshot is compared with the last one
// sent, for changes that come with no event (a lease renewed quietly, a
// slot freed). Lease clocks are not changes: the client ages them itself.
const snapEvery = time.Second

// frameEvery is the shortest time between two pushes of one pane to one
// console: the console coalesces pane notices to 60 a second anyway.
const frameEvery = time.Second / 60

// watcher pushes one client's view: the snapshot when it changes, every
// event in order, and each dirty pane's newest screen. It writes on the
// connection from one goroutine; while a slow client blocks a write, the
// coordinator's hub holds that client's events (bounded) and coalesces its
// pane notices, so the engine never waits for a console and a console
// never grows the engine's memory past the backlog.
type watcher struct {
	s *Server
	c *wire.Conn
	// lastSent is the snapshot last sent, and lastSnap the encoding of its
	// stable form, made only when a later snapshot is compared with it
	// (never on an attach, whose first frame waits for the snapshot).
	lastSent *coord.Snapshot
	lastSnap []byte
	lastGen  uint64             // the Gen of the snapshot last compared
	sessions map[task.ID]string // the session of each pane as last sent
	dirty    map[task.ID]bool
	seen     map[string]bool // ids of events replayed from the ledger
	// rows: the client takes changed rows and no text (watchReq.Rows);
	// sent holds each pane's rows as last sent to it.
	rows bool
	// shift: the client also takes a frame's shift (watchReq.Shift)
	shift bool
	sent  map[task.ID]sentPane
	// caches: each pane's rows as last read (session.RowCache)
	caches map[task.ID]*session.RowCache
	buf    []byte // the last pane frame's encoding, reused
}

// sentPane is a pane's screen as a watcher last sent it.
type sentPane struct {
	session    string
	cols, rows int
	lines      []string
}

func (s *Server) watch(ctx context.Context, c *wire.Conn, q watchReq) {
	after := q.After
	w := &watcher{s: s, c: c, sessions: map[task.ID]string{}, dirty: map[task.ID]bool{}, rows: q.Rows, shift: q.Rows && q.Shift, sent: map[task.ID]sentPane{}}
	ch, unsub := s.Engine.Subscribe()
	defer func() { unsub() }()
	if after > 0 && s.Store != nil {
		evs, err := s.Store.EventList(ctx, store.EventListParams{AfterSeq: after})
		if err == nil {
			w.seen = map[string]bool{}
			for i := range evs {
				w.seen[evs[i].ID] = true
				if c.Push(opEvent, 0, evs[i]) != nil {
					return
				}
			}
		}
	}
	// A console's first frame is the history. The socket is served while
	// the coordinator still loads the store, and a console given the empty
	// snapshot of that moment would show no tasks until an event came:
	// its first snapshot waits for the load (events meanwhile queue).
	if l, ok := s.Engine.(interface{ Loaded() <-chan struct{} }); ok {
		select {
		case <-l.Loaded():
		case <-ctx.Done():
			return
		}
	}
	if w.sendSnap(true) != nil || w.flushPanes() != nil || c.Push(opReady, 0, nil) != nil {
		return
	}
	tick := time.NewTicker(snapEvery)
	defer tick.Stop()
	// Panes go out at most once a frame: an agent that floods its
	// terminal costs each console one screen per frame, not one per
	// write.
	frame := time.NewTimer(frameEvery)
	frame.Stop()
	var armed bool
	var lastFlush time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-frame.C:
			armed = false
		case <-tick.C:
			if w.sendSnap(false) != nil {
				return
			}
		case n, ok := <-ch:
			if !ok {
				return
			}
			if n.Behind {
				unsub()
				ch, unsub = s.Engine.Subscribe()
				if c.Push(opBehind, 0, nil) != nil {
					return
				}
				continue
			}
			if w.notice(n) != nil {
				return
			}
			// Take everything already waiting before drawing panes, so a
			// burst of output costs one screen per pane.
			for more := true; more; {
				select {
				case n, ok := <-ch:
					if !ok {
						return
					}
					if n.Behind {
						more = false
						unsub()
						ch, unsub = s.Engine.Subscribe()
						if c.Push(opBehind, 0, nil) != nil {
							return
						}
						continue
					}
					if w.notice(n) != nil {
						return
					}
				default:
					more = false
				}
			}
		}
		if len(w.dirty) == 0 || armed {
			continue
		}
		if wait := frameEvery - time.Since(lastFlush); wait > 0 {
			frame.Reset(wait)
			armed = true
			continue
		}
		lastFlush = time.Now()
		if w.flushPanes() != nil {
			return
		}
	}
}

func (w *watcher) notice(n coord.Notice) error {
	if n.Pane != "" {
		w.dirty[n.Pane] = true
	}
	if n.Event == nil {
		return nil
	}
	if w.seen != nil && w.seen[n.Event.ID] {
		return nil
	}
	// The coordinator publishes the snapshot an event led to before the
	// event: send it first, so the client's rule holds too.
	if err := w.sendSnap(false); err != nil {
		return err
	}
	w.s.active()
	return w.c.Push(opEvent, 0, n.Event)
}

// sendSnap sends the snapshot when it differs from the last one sent in
// more than its clocks.
func (w *watcher) sendSnap(force bool) error {
	if g, ok := w.s.Engine.(interface{ SnapshotGen() uint64 }); ok && !force {
		if gen := g.SnapshotGen(); gen != 0 && gen == w.lastGen {
			return nil
		}
	}
	snap := w.s.Engine.Snapshot()
	// An unchanged Gen is an unchanged snapshot: no need to encode
	// thousands of tasks every second to find that out.
	if !force && snap.Gen != 0 && snap.Gen == w.lastGen {
		return nil
	}
	w.lastGen = snap.Gen
	if !force {
		if w.lastSnap == nil && w.lastSent != nil {
			last, err := json.Marshal(toWire(stable(*w.lastSent)))
			if err != nil {
				return err
			}
			w.lastSnap = last
		}
		// Compared in its wire form: rows encode several times faster
		// than the views' JSON objects, and this runs on every change.
		key, err := json.Marshal(toWire(stable(snap)))
		if err != nil {
			return err
		}
		if bytes.Equal(key, w.lastSnap) {
			return nil
		}
		w.lastSnap = key
	} else {
		w.lastSnap = nil
	}
	w.lastSent = &snap
	// A pane whose session changed is redrawn (a new session) or dropped.
	live := map[task.ID]bool{}
	for _, tv := range snap.Tasks {
		if tv.SessionID == "" {
			continue
		}
		live[tv.Task.ID] = true
		if w.sessions[tv.Task.ID] != tv.SessionID {
			w.dirty[tv.Task.ID] = true
		}
	}
	for id := range w.sessions {
		if !live[id] {
			w.dirty[id] = true
		}
	}
	return w.c.Push(opSnap, 0, toWire(snap))
}

// stable is the snapshot without what changes on its own with time.
func stable(s coord.Snapshot) coord.Snapshot {
	s.At, s.Gen = time.Time{}, 0
	tasks := make([]coord.TaskView, len(s.Tasks))
	copy(tasks, s.Tasks)
	for i := range tasks {
		if lv := tasks[i].Lease; lv != nil {
			l := *lv
			l.Remaining, l.WindowOpensIn, l.SinceProgress = 0, 0, 0
			tasks[i].Lease = &l
		}
	}
	s.Tasks = tasks
	bases := make([]coord.BaseView, len(s.Bases))
	copy(bases, s.Bases)
	for i := range bases {
		bases[i].ExpiresIn = 0
	}
	s.Bases = bases
	return s
}

// flushPanes sends the newest screen of every dirty pane.
func (w *watcher) flushPanes() error {
	if len(w.dirty) == 0 {
		return nil
	}
	// A pane whose session the client has not seen in a snapshot yet (a
	// relayed one, relay.go) comes after the snapshot that names it, or the
	// client would drop it as ended. An unchanged snapshot costs a load.
	if err := w.sendSnap(false); err != nil {
		return err
	}
	var sessions map[task.ID]string
	for id := range w.dirty {
		delete(w.dirty, id)
		v, ok := w.s.Engine.Pane(id)
		if !ok {
			if _, had := w.sessions[id]; had {
				delete(w.sessions, id)
				delete(w.sent, id)
				delete(w.caches, id)
				if err := w.c.Push(opPane, 0, paneFrame{Task: id, Gone: true}); err != nil {
					return err
				}
			}
			continue
		}
		if sessions == nil {
			sessions = map[task.ID]string{}
			for _, tv := range w.s.Engine.Snapshot().Tasks {
				sessions[tv.Task.ID] = tv.SessionID
			}
		}
		f := frameOf(id, sessions[id], v, !w.rows, w.cache(id))
		w.sessions[id] = f.Session
		if w.rows {
			f = w.delta(f)
		}
		var err error
		w.s.active()
		if w.buf, err = w.c.PushBody(opPane, &f, w.buf); err != nil {
			return err
		}
	}
	return nil
}

// cache returns the row cache of a pane.
func (w *watcher) cache(id task.ID) *session.RowCache {
	rc := w.caches[id]
	if rc == nil {
		if w.caches == nil {
			w.caches = map[task.ID]*session.RowCache{}
		}
		rc = &session.RowCache{}
		w.caches[id] = rc
	}
	return rc
}

// delta turns a frame into the rows that changed since the frame last
// sent of the same session and size, and remembers its rows. The client
// applies every frame in the order sent, so what it holds is what was
// last sent.
func (w *watcher) delta(f paneFrame) paneFrame {
	prev, ok := w.sent[f.Task]
	w.sent[f.Task] = sentPane{session: f.Session, cols: f.Cols, rows: f.Rows, lines: f.Lines}
	if !ok || prev.session != f.Session || prev.cols != f.Cols || prev.rows != f.Rows || len(prev.lines) != len(f.Lines) {
		return f
	}
	var set []paneRow
	if w.shift {
		var changed []int
		f.Shift, changed = session.RowsDelta(prev.lines, f.Lines)
		for _, i := range changed {
			set = append(set, paneRow{Y: i, Line: f.Lines[i]})
		}
	} else {
		for i, l := range f.Lines {
			if l != prev.lines[i] {
				set = append(set, paneRow{Y: i, Line: l})
			}
		}
	}
	f.Lines, f.Set, f.Delta = nil, set, true
	return f
}
