package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A console attached to one engine lists every task of a shared store,
// whichever engine runs it (coord/fleet.go), but the live pane of a session
// is in the engine that holds it. The relay reaches that engine the way a
// console would, with the same protocol: over its unix socket when its
// heartbeat says it runs on this machine, otherwise through `ssh DEST BIN
// attach --stdio --no-start -C REPO` with the destination, binary and
// repository its heartbeat advertises (store.Engine SSH, Bin, Repo). It
// then serves that engine's panes as its own: their screens, and the keys
// and resizes typed into them.
//
//	console ── engine A ── relay ══ ssh ══ attach --stdio ── engine B ── session host ── agent
//
// The commands that act on a live session (resubmit, extend, expire,
// cancel, park) go to the engine that holds it, which stops its session
// as it would for its own console: over the connection kept for the
// consoles watching here, or over one made for the command when none
// watches (a command from the CLI). Corrections are not relayed: a correction is a
// decision recorded in the shared store, which engine B hears and types
// into its session once (coord's deliverForeign), whichever console it
// came from.

// relayRetry is how long the relay waits before dialling an engine again
// after a failed dial or a lost connection.
const relayRetry = 5 * time.Second

// maxUnsent bounds the pane sizes kept for engines not reached yet.
const maxUnsent = 1024

// relayDialWait bounds one dial, handshake and first snapshot included.
const relayDialWait = 30 * time.Second

// relay is the coordinator as the engine serves it on a shared store: its
// own panes, plus the panes of sessions other engines hold.
type relay struct {
	*coord.Opened
	self    string // this machine's name (TaskView.Host of its own tasks)
	version string
	logf    func(string, ...any)

	// gen grows whenever a relayed session appears, changes or goes, so a
	// watcher comparing snapshot generations sees it.
	gen atomic.Uint64

	mu    sync.Mutex
	held  map[task.ID]string // the machine of each task another engine runs
	peers map[string]*peer   // by machine
	// unsent are the pane sizes a console asked for tasks another engine
	// runs while the relay had no connection to it; connect sends them
	// before it serves that engine's panes, so a pane is not shown at the
	// size its session started at until the console happens to ask again.
	unsent map[task.ID][2]int
	wg     sync.WaitGroup

	// watchers counts the consoles watching this engine: a connection to
	// another engine costs both engines a pane stream, so the relay keeps
	// connections only while someone watches (and relayRetry after the
	// last one left, so a console that resubscribes does not redial).
	watchers atomic.Int32
	idle     time.Time     // when the last watcher left; loop-owned
	wake     chan struct{} // a first watcher arrived
}

// peer is the connection to another machine's engine.
type peer struct {
	host     string
	cl       *Client
	dialling bool
	retry    time.Time          // no dial before this, after a failure
	failed   string             // the last failure, logged once
	sessions map[task.ID]string // its live sessions, from its snapshot
	// leases are their leases as that snapshot showed them, its clocks
	// as of learned.
	leases  map[task.ID]coord.LeaseView
	learned time.Time
	spare   time.Time // since when no longer needed
}

func newRelay(o *coord.Opened, version string, logf func(string, ...any)) *relay {
	return &relay{Opened: o, self: coord.HostName(o.Config.Fleet.Host), version: version, logf: logf,
		held: map[task.ID]string{}, peers: map[string]*peer{}, unsent: map[task.ID][2]int{}, wake: make(chan struct{}, 1)}
}

// Subscribe is the coordinator's, counted: only the engine's watchers
// subscribe through the relay.
func (r *relay) Subscribe() (<-chan coord.Notice, func()) {
	ch, unsub := r.Opened.Subscribe()
	if r.watchers.Add(1) == 1 {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	var once sync.Once
	return ch, func() {
		unsub()
		once.Do(func() { r.watchers.Add(-1) })
	}
}

// Snapshot is the coordinator's, with the session of each task another
// engine runs whose engine the relay reaches: a console draws its pane.
func (r *relay) Snapshot() coord.Snapshot {
	s := r.Opened.Snapshot()
	s.Gen += r.gen.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	// The coordinator's snapshots share their tasks: change a copy.
	copied := false
	for i := range s.Tasks {
		tv := s.Tasks[i]
		if tv.SessionID != "" || tv.Host == "" || tv.Host == r.self {
			continue
		}
		p := r.peers[tv.Host]
		if p == nil || p.cl == nil || p.sessions[tv.Task.ID] == "" {
			continue
		}
		if !copied {
			s.Tasks = slices.Clone(s.Tasks)
			copied = true
		}
		s.Tasks[i].SessionID = p.sessions[tv.Task.ID]
		if l, ok := p.leases[tv.Task.ID]; ok {
			// The holder's lease, its clocks aged since it was read.
			d := time.Since(p.learned)
			l.Remaining = max(l.Remaining-d, 0)
			l.WindowOpensIn = max(l.WindowOpensIn-d, 0)
			l.SinceProgress += d
			s.Tasks[i].Lease = &l
		}
	}
	return s
}

// SnapshotGen grows with the coordinator's and with every relayed session
// change (both only grow, so their sum changes when either does).
func (r *relay) SnapshotGen() uint64 { return r.Opened.SnapshotGen() + r.gen.Load() }

// Pane is this engine's pane of the task, or the one its holder pushed.
func (r *relay) Pane(id task.ID) (session.View, bool) {
	if v, ok := r.Opened.Pane(id); ok {
		return v, true
	}
	if cl := r.peerOf(id); cl != nil {
		return cl.Pane(id)
	}
	return nil, false
}

// Input types into this engine's pane of the task, or its holder's.
func (r *relay) Input(id task.ID, b []byte) error {
	if _, ok := r.Opened.Pane(id); !ok {
		if cl := r.peerOf(id); cl != nil {
			return cl.Input(id, b)
		}
	}
	return r.Opened.Input(id, b)
}

// ResizePane resizes this engine's pane of the task, or its holder's: the
// pty follows the pane of the console that draws it, wherever it is.
func (r *relay) ResizePane(id task.ID, cols, rows int) error {
	if _, ok := r.Opened.Pane(id); !ok {
		if cl := r.peerOf(id); cl != nil {
			return cl.ResizePane(id, cols, rows)
		}
	}
	return r.Opened.ResizePane(id, cols, rows)
}

// SizePaneFor sizes this engine's pane of the task for viewer, or asks its
// holder, where this engine is one console among that engine's.
// Asked before the relay reaches the holder, the size is sent when it does.
func (r *relay) SizePaneFor(viewer string, id task.ID, cols, rows int) (int, int, error) {
	if _, ok := r.Opened.Pane(id); !ok {
		r.mu.Lock()
		var cl *Client
		if p := r.peers[r.held[id]]; p != nil {
			cl = p.cl
		}
		if cl == nil && cols > 0 && rows > 0 && len(r.unsent) < maxUnsent {
			r.unsent[id] = [2]int{cols, rows}
		}
		r.mu.Unlock()
		if cl != nil {
			return cl.SizePane(id, cols, rows)
		}
	}
	return r.Opened.SizePaneFor(viewer, id, cols, rows)
}

// InputFor types into this engine's pane of the task for viewer, or into
// its holder's.
func (r *relay) InputFor(viewer string, id task.ID, b []byte) error {
	if _, ok := r.Opened.Pane(id); !ok {
		if cl := r.peerOf(id); cl != nil {
			return cl.Input(id, b)
		}
	}
	return r.Opened.InputFor(viewer, id, b)
}

// SizePane sizes a pane for the console in this engine's process.
func (r *relay) SizePane(id task.ID, cols, rows int) (int, int, error) {
	return r.SizePaneFor("", id, cols, rows)
}

// Do sends a command on a session another engine holds to that engine:
// over the relay's connection while a console watches here, else over one
// made for the command. Everything else, corrections included, goes to
// this engine's coordinator.
func (r *relay) Do(ctx context.Context, cmd coord.Command) (coord.Result, error) {
	switch cmd.Kind {
	case coord.CmdResubmit, coord.CmdExtend, coord.CmdExpire, coord.CmdCancel, coord.CmdPark:
		tasks := r.Opened.Snapshot().Tasks
		ids := make([]task.ID, len(tasks))
		for i, tv := range tasks {
			ids[i] = tv.Task.ID
		}
		id, err := coord.ResolveID(ids, string(cmd.TaskID))
		if err != nil {
			break
		}
		cmd.TaskID = id
		if cl := r.peerOf(id); cl != nil {
			return cl.Do(ctx, cmd)
		}
		// Nobody watches here, so no connection is kept (a CLI command):
		// one is made for this command.
		host := r.heldBy(tasks[slices.Index(ids, id)])
		if host == "" {
			break
		}
		cl, err := r.dial(ctx, host, false)
		if err == nil {
			defer cl.Close()
			return cl.Do(ctx, cmd)
		}
		if cmd.Kind != coord.CmdCancel && cmd.Kind != coord.CmdPark {
			return coord.Result{}, fmt.Errorf("task %s runs on %s, and its engine cannot be reached from here: %w", id.Short(), host, err)
		}
		// A cancel or a park is a move in the shared store, which the
		// engine holding the task hears of and acts on.
	}
	return r.Opened.Do(ctx, cmd)
}

// heldBy is the machine whose engine runs tv's live session, "" when it is
// this one or none.
func (r *relay) heldBy(tv coord.TaskView) string {
	if tv.SessionID == "" && tv.Host != "" && tv.Host != r.self && tv.Task.State.Live() {
		return tv.Host
	}
	return ""
}

// peerOf is the connection to the engine that holds task id, if any.
func (r *relay) peerOf(id task.ID) *Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.peers[r.held[id]]; p != nil {
		return p.cl
	}
	return nil
}

// run keeps a connection to every engine that holds a live task, reading
// the coordinator's view after each of its events, each second when its
// snapshot changed without one (a task another engine took, seen on
// refresh), and every relayRetry to redial, until ctx ends; then it
// closes them and waits.
func (r *relay) run(ctx context.Context) {
	ch, unsub := r.Opened.Subscribe()
	defer func() { unsub() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var gen uint64
	var synced time.Time
	for {
		gen, synced = r.Opened.SnapshotGen(), time.Now()
		r.sync(ctx)
		for wait := true; wait; {
			select {
			case <-ctx.Done():
				r.closePeers()
				return
			case <-r.wake:
				wait = false
			case <-tick.C:
				wait = r.Opened.SnapshotGen() == gen && time.Since(synced) < relayRetry
			case n, ok := <-ch:
				if !ok {
					r.closePeers()
					return
				}
				if n.Behind {
					unsub()
					ch, unsub = r.Opened.Subscribe()
				}
				// A pane that drew changed no task.
				wait = !n.Behind && n.Event == nil
			}
		}
	}
}

// closePeers closes every connection and waits for their followers.
func (r *relay) closePeers() {
	r.mu.Lock()
	for _, p := range r.peers {
		if p.cl != nil {
			_ = p.cl.Close()
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// sync notes which machine runs each live task this engine does not, and
// dials the engines it needs and has no connection to.
func (r *relay) sync(ctx context.Context) {
	held := map[task.ID]string{}
	for _, tv := range r.Opened.Snapshot().Tasks {
		if h := r.heldBy(tv); h != "" {
			held[tv.Task.ID] = h
		}
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var moved []task.ID
	for id, h := range r.held {
		if held[id] != h {
			moved = append(moved, id)
		}
	}
	r.held = held
	for id := range r.unsent {
		if held[id] == "" {
			delete(r.unsent, id) // not another engine's: this one sized it
		}
	}
	need := map[string]bool{}
	if r.watchers.Load() > 0 {
		r.idle = time.Time{}
		for _, h := range held {
			need[h] = true
		}
	} else if r.idle.IsZero() || now.Sub(r.idle) < relayRetry {
		// Nobody watches: keep what is open a while, dial nothing.
		if r.idle.IsZero() {
			r.idle = now
		}
		for _, p := range r.peers {
			if p.cl != nil || p.dialling {
				need[p.host] = true
			}
		}
	}
	for h, p := range r.peers {
		if need[h] || p.dialling {
			p.spare = time.Time{}
			continue
		}
		// Nothing of that engine's is live any more, or nobody watches
		// here. The connection goes relayRetry later: a command sent
		// through it (a park, which ends the task's life there) may still
		// wait for its reply.
		if p.cl != nil && (p.spare.IsZero() || now.Sub(p.spare) < relayRetry) {
			if p.spare.IsZero() {
				p.spare = now
			}
			continue
		}
		if p.cl != nil {
			_ = p.cl.Close()
		}
		delete(r.peers, h)
	}
	for h := range need {
		p := r.peers[h]
		if p == nil {
			p = &peer{host: h}
			r.peers[h] = p
		}
		if p.cl != nil || p.dialling || now.Before(p.retry) || ctx.Err() != nil {
			continue
		}
		p.dialling = true
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.connect(ctx, p)
		}()
	}
	if len(moved) > 0 {
		r.gen.Add(1)
		for _, id := range moved {
			r.Opened.NotePane(id)
		}
	}
}

// connect dials p's engine and follows it until the connection ends.
func (r *relay) connect(ctx context.Context, p *peer) {
	cl, err := r.dial(ctx, p.host, true)
	r.mu.Lock()
	if err != nil {
		p.dialling = false
		p.retry = time.Now().Add(relayRetry)
		msg := err.Error()
		if msg != p.failed && ctx.Err() == nil {
			p.failed = msg
			r.logf("cannot reach the engine on %s to draw its panes here: %v", p.host, err)
		}
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	// Taken before any size is sent, so the frames B pushes at the sizes
	// are seen, and handed to follow.
	sub := subscribe(cl)
	defer sub.end()
	r.mu.Lock()
	for {
		if r.peers[p.host] != p || ctx.Err() != nil {
			p.dialling = false
			r.mu.Unlock()
			_ = cl.Close()
			return
		}
		sizes := map[task.ID][2]int{}
		for id, sz := range r.unsent {
			if r.held[id] == p.host {
				sizes[id] = sz
				delete(r.unsent, id)
			}
		}
		if len(sizes) == 0 {
			break
		}
		// Sent before the connection serves panes; asks that come
		// meanwhile wait in unsent for the next round.
		r.mu.Unlock()
		took := map[task.ID][2]int{}
		for id, sz := range sizes {
			c, rows, err := cl.SizePane(id, sz[0], sz[1])
			if err != nil {
				r.logf("cannot size the pane of task %s on %s: %v", id.Short(), p.host, err)
				continue
			}
			took[id] = [2]int{c, rows}
		}
		waitSized(ctx, cl, sub, took)
		r.mu.Lock()
	}
	p.cl, p.failed, p.dialling = cl, "", false
	r.mu.Unlock()
	r.logf("drawing the panes of the engine on %s (pid %d) here", p.host, cl.Pid())
	r.follow(ctx, p, cl, sub)
}

// notices is a subscription to a client's notices, renewed when it falls
// behind.
type notices struct {
	cl    *Client
	ch    <-chan coord.Notice
	unsub func()
}

func subscribe(cl *Client) *notices {
	s := &notices{cl: cl}
	s.ch, s.unsub = cl.Subscribe()
	return s
}

func (s *notices) renew() { s.unsub(); s.ch, s.unsub = s.cl.Subscribe() }
func (s *notices) end()   { s.unsub() }

// sizedWait bounds the wait for a holder's frames at the sizes the relay
// sent it.
const sizedWait = 2 * time.Second

// waitSized waits until cl's pane of each task of took is at that size, or
// has none: the holder answers a size before it pushes the pane at it, and
// the pane cl held until then is the one at the old size, which a console
// would be served first and mark "sized by another console".
func waitSized(ctx context.Context, cl *Client, sub *notices, took map[task.ID][2]int) {
	bound := time.NewTimer(sizedWait)
	defer bound.Stop()
	for {
		sized := true
		for id, sz := range took {
			if v, ok := cl.Pane(id); ok {
				c, rows := v.Size()
				sized = sized && [2]int{c, rows} == sz
			}
		}
		if sized {
			return
		}
		select {
		case n, ok := <-sub.ch:
			if !ok {
				return // the connection is ending
			}
			if n.Behind {
				sub.renew()
			}
		case <-bound.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// follow relays cl's pane notices and notes its sessions after each
// snapshot it pushes, on sub, until the connection ends.
func (r *relay) follow(ctx context.Context, p *peer, cl *Client, sub *notices) {
	r.learn(p, cl)
	for {
		select {
		case <-ctx.Done():
			return
		case <-cl.Done():
			r.mu.Lock()
			if p.cl == cl {
				p.cl, p.sessions = nil, nil
				p.retry = time.Now().Add(relayRetry)
			}
			ids := r.tasksOn(p.host)
			r.mu.Unlock()
			r.gen.Add(1)
			for _, id := range ids {
				r.Opened.NotePane(id)
			}
			if ctx.Err() == nil {
				r.logf("lost the engine on %s: %v", p.host, cl.Err())
			}
			return
		case n, ok := <-sub.ch:
			if !ok {
				sub.ch = nil // the connection is ending: Done follows
				continue
			}
			if n.Behind {
				sub.renew()
				r.learn(p, cl)
				continue
			}
			if n.Snapshot {
				// Every snapshot the engine pushes, one an event led to
				// (pushed before it) or one that changed on its own (a
				// session started, a lease renewed quietly).
				r.learn(p, cl)
			}
			if n.Pane != "" {
				r.Opened.NotePane(n.Pane)
			}
		}
	}
}

// learn notes the sessions p's engine runs, as its snapshot says.
func (r *relay) learn(p *peer, cl *Client) {
	sessions := map[task.ID]string{}
	leases := map[task.ID]coord.LeaseView{}
	now := time.Now()
	for _, tv := range cl.Snapshot().Tasks {
		if tv.SessionID != "" {
			sessions[tv.Task.ID] = tv.SessionID
			if tv.Lease != nil {
				leases[tv.Task.ID] = *tv.Lease
			}
		}
	}
	r.mu.Lock()
	changed := !maps.Equal(p.sessions, sessions)
	// A lease that changed in more than its clocks (a renewal, an
	// extension) is a change consoles must be sent.
	renewed := len(leases) != len(p.leases)
	for id, l := range leases {
		o, ok := p.leases[id]
		renewed = renewed || !ok || o.Token != l.Token || !o.Deadline.Equal(l.Deadline) || o.Renewals != l.Renewals || o.LastDecision != l.LastDecision
	}
	p.sessions, p.leases, p.learned = sessions, leases, now
	r.mu.Unlock()
	if renewed && !changed {
		r.gen.Add(1)
	}
	if changed {
		r.gen.Add(1)
		for id := range sessions {
			r.Opened.NotePane(id)
		}
	}
}

// tasksOn lists the tasks host runs. Called with r.mu held.
func (r *relay) tasksOn(host string) []task.ID {
	var ids []task.ID
	for id, h := range r.held {
		if h == host {
			ids = append(ids, id)
		}
	}
	return ids
}

// dial connects to the running engine of host, as its newest heartbeat
// advertises it; watch follows its panes and events too, which one
// command does not need.
func (r *relay) dial(ctx context.Context, host string, watch bool) (*Client, error) {
	ctx, cancel := context.WithTimeout(ctx, relayDialWait)
	defer cancel()
	es, err := r.Opened.Store.EngineList(ctx)
	if err != nil {
		return nil, err
	}
	var e store.Engine
	for _, x := range es { // newest heartbeat first
		if x.Host == host && x.StoppedAt.IsZero() {
			e = x
			break
		}
	}
	if e.ID == "" {
		return nil, fmt.Errorf("no running engine on %s in the engines table", host)
	}
	o := Options{Watch: watch, Version: r.version, Kind: "relay"}
	if me, _ := os.Hostname(); e.SSH == "" || e.SSH == me {
		// The same machine: its socket, no ssh.
		return Dial(ctx, PathsFor(e.Repo).Socket, o)
	}
	bin := e.Bin
	if bin == "" {
		bin = "orchestra-tui"
	}
	conn, err := DialSSH(e.SSH, e.Repo, bin, "--no-start")
	if err != nil {
		return nil, err
	}
	cl, err := NewClient(ctx, conn, o)
	if err != nil {
		return nil, conn.Explain(fmt.Errorf("ssh %s: %w", e.SSH, err))
	}
	return cl, nil
}

// Recording reads a session's recording here, or, when the engine of
// another machine ran the session, asks that machine's running engine.
func (r *relay) Recording(ctx context.Context, id task.ID, sessionID string) (coord.Recording, error) {
	rec, err := r.Opened.Recording(ctx, id, sessionID)
	var away *coord.RecordingElsewhere
	if !errors.As(err, &away) {
		return rec, err
	}
	es, lerr := r.Opened.Store.EngineList(ctx)
	if lerr != nil {
		return rec, errors.Join(err, lerr)
	}
	host := ""
	for _, e := range es {
		if e.ID == away.Holder {
			host = e.Host
		}
	}
	if host == "" || host == r.self {
		return rec, err
	}
	cl, derr := r.dial(ctx, host, false)
	if derr != nil {
		return rec, fmt.Errorf("the recording of session %s is on %s, whose engine cannot be reached from here: %w", away.SessionID, host, derr)
	}
	defer cl.Close()
	return cl.Recording(ctx, id, away.SessionID)
}
