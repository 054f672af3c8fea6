package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/vt"
	"github.com/orchestra-tui/orchestra-tui/wire"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// Client is an engine's connection to one session host. It offers what the
// worker needs of a live session (the same methods as *session.Session:
// the screen, keys, checked deliveries, resize, stop, the exit), so the
// worker's logic runs unchanged on an agent in another process.
type Client struct {
	c       *wire.Conn
	calls   *wire.Caller
	welcome Welcome
	version atomic.Uint64 // the newest screen version the host announced
	noCPU   atomic.Bool   // the host is older than the cpu request
	noTrust atomic.Bool   // the host is older than the trust request
	// trust: the newest deadline to send (zero: none waiting), and
	// whether a sender is at work (Trust)
	trustMu    sync.Mutex
	trustUntil time.Time
	trusting   bool
	// push: the host pushes the changed rows with each notice
	// (Welcome.PushRows), set before the connection is read
	push bool

	mu       sync.Mutex
	cols     int
	rows     int
	exit     *Exit
	lost     bool
	detached bool

	changed  chan struct{}
	done     chan struct{} // the agent exited, or the host was lost
	doneOnce sync.Once
	readDone chan struct{}
	view     *view
}

// ErrLost means the connection to the host ended without the agent's exit:
// the host died or was killed.
var ErrLost = worker.ErrHostLost

// callWait bounds a request that has no context of its own.
const callWait = 10 * time.Second

// Dial connects to the host at a unix socket and starts watching it.
func Dial(ctx context.Context, path, version string) (*Client, error) {
	nc, err := wire.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	c := wire.NewConn(nc)
	cl := &Client{c: c, calls: wire.NewCaller(c, ErrLost),
		changed: make(chan struct{}, 1), done: make(chan struct{}), readDone: make(chan struct{})}
	cl.view = &view{cl: cl}
	err = wire.Hello(c, hello{Protocol: ProtocolVersion, Version: version, Client: "engine"}, &cl.welcome)
	var ref *wire.Refusal
	switch {
	case errors.As(err, &ref):
		nc.Close()
		var w Welcome
		if json.Unmarshal(ref.Body, &w) == nil && w.Protocol != 0 && w.Protocol != ProtocolVersion {
			return nil, &VersionError{Client: ProtocolVersion, Host: w.Protocol, HostVersion: w.Version}
		}
		return nil, err
	case err != nil:
		nc.Close()
		return nil, fmt.Errorf("session host handshake: %w", err)
	}
	cl.cols, cl.rows = cl.welcome.Cols, cl.welcome.Rows
	if e := cl.welcome.Exit; e != nil {
		// The agent exited while nobody watched: the exit is known now.
		cl.exit = e
		cl.finish()
	}
	if err := cl.start(ctx); err != nil {
		return nil, err
	}
	return cl, nil
}

// start reads the connection and watches the host: with pushed rows when
// the welcome offers them, else with bare notices, after each of which the
// view asks for what changed.
func (cl *Client) start(ctx context.Context) error {
	cl.push = cl.welcome.PushRows
	go cl.read()
	var q any
	if cl.push {
		q = watchReq{Rows: true}
	}
	if _, err := cl.call(ctx, opWatch, q); err != nil {
		cl.Detach()
		return err
	}
	// The first screen, so the view has something to show at once (a
	// host that pushes rows sent them before its reply).
	cl.view.held(false)
	return nil
}

// Welcome is what the host said about itself when this client connected:
// its pid, the agent's, the session and, if the agent had already exited,
// how and when.
func (cl *Client) Welcome() Welcome { return cl.welcome }

func (cl *Client) read() {
	var err error
	defer func() {
		cl.calls.Fail(ErrLost)
		cl.mu.Lock()
		if cl.exit == nil && !cl.detached {
			// The host died (or was killed) without reporting an exit:
			// whatever ran in it is beyond reach, which the worker
			// handles as an exit.
			cl.lost = true
			cl.exit = &Exit{Code: -1, At: time.Now().UTC()}
		}
		detached := cl.detached
		cl.mu.Unlock()
		cl.c.Close()
		if !detached {
			cl.finish()
		}
		close(cl.readDone)
	}()
	for {
		var f wire.Frame
		f, err = cl.c.Recv()
		if err != nil {
			return
		}
		switch f.Op {
		case opOK, opError:
			cl.calls.Reply(f)
		case opChanged:
			if cl.push {
				var r rowsReply
				if wire.ReadBody(f.Body, &r) == nil {
					cl.view.pushed(r)
				}
				cl.signal()
				continue
			}
			var c changed
			if json.Unmarshal(f.Body, &c) == nil {
				cl.noteVersion(c.Version)
			}
			cl.signal()
		case opExit:
			var e Exit
			if json.Unmarshal(f.Body, &e) == nil {
				cl.mu.Lock()
				cl.exit = &e
				cl.mu.Unlock()
				cl.finish()
			}
		}
	}
}

func (cl *Client) finish() {
	cl.doneOnce.Do(func() {
		close(cl.done)
		cl.signal()
	})
}

func (cl *Client) signal() {
	select {
	case cl.changed <- struct{}{}:
	default:
	}
}

func (cl *Client) noteVersion(v uint64) {
	for {
		old := cl.version.Load()
		if v <= old || cl.version.CompareAndSwap(old, v) {
			return
		}
	}
}

// call sends a request and waits for its reply.
func (cl *Client) call(ctx context.Context, op string, body any) (json.RawMessage, error) {
	f, err := cl.calls.Call(ctx, op, body)
	if err != nil {
		return nil, err
	}
	if f.Op == opError {
		return nil, decodeErr(f.Error, f.Body)
	}
	return f.Body, nil
}

func (cl *Client) quick(op string, body any) error {
	ctx, cancel := context.WithTimeout(context.Background(), callWait)
	defer cancel()
	_, err := cl.call(ctx, op, body)
	return err
}

// View returns the session's screen, fetched from the host when it has
// changed since it was last read.
func (cl *Client) View() session.View { return cl.view }

// Write sends raw bytes to the agent, as typed in focus mode.
func (cl *Client) Write(b []byte) error { return cl.quick(opWrite, writeReq{Data: b}) }

// Paste sends text as one paste, bracketed if the agent asked for it.
func (cl *Client) Paste(text string) error { return cl.quick(opPaste, textReq{Text: text}) }

// Notice shows a line in the pane without sending it to the agent.
func (cl *Client) Notice(line string) error { return cl.quick(opNotice, textReq{Text: line}) }

// WaitReady confirms the launch (session.Session.WaitReady, run by the
// host, where the screen is).
func (cl *Client) WaitReady(ctx context.Context) error {
	_, err := cl.call(ctx, opWaitReady, nil)
	return err
}

// DeliverChecked delivers text the harness's way and confirms the agent
// took it.
func (cl *Client) DeliverChecked(ctx context.Context, text string) error {
	_, err := cl.call(ctx, opDeliver, textReq{Text: text})
	return err
}

// SendChecked pastes text, submits it and confirms the agent took it.
func (cl *Client) SendChecked(ctx context.Context, text string) error {
	return cl.SendKeyed(ctx, "", text)
}

// SendKeyed is SendChecked for an input named key that must reach the
// agent once: the host remembers the key as it begins to type, and an
// engine that takes the session up again reads the keys in the welcome.
func (cl *Client) SendKeyed(ctx context.Context, key, text string) error {
	_, err := cl.call(ctx, opSend, textReq{Text: text, Key: key})
	return err
}

// SubmitChecked sends the submit key and confirms the agent took what
// waited at its prompt.
func (cl *Client) SubmitChecked(ctx context.Context) error {
	_, err := cl.call(ctx, opSubmit, nil)
	return err
}

// Resize changes the pty's and the emulator's size.
func (cl *Client) Resize(cols, rows int) error {
	if err := cl.quick(opResize, sizeReq{Cols: cols, Rows: rows}); err != nil {
		return err
	}
	cl.mu.Lock()
	cl.cols, cl.rows = cols, rows
	cl.mu.Unlock()
	return nil
}

// Size returns the pty's size: the last one the launch or Resize set.
func (cl *Client) Size() (cols, rows int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.cols, cl.rows
}

// CPU returns the CPU time the agent's tree has used, as its host
// measures it (session.Session.CPU); false when the host cannot measure
// it, does not answer within cpuWait, or is older than the request (it is
// then not asked again).
func (cl *Client) CPU() (time.Duration, bool) {
	if cl.noCPU.Load() {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), cpuWait)
	defer cancel()
	b, err := cl.call(ctx, opCPU, nil)
	if err != nil {
		if strings.Contains(err.Error(), "unknown request") {
			cl.noCPU.Store(true)
		}
		return 0, false
	}
	var c cpu
	if json.Unmarshal(b, &c) != nil {
		return 0, false
	}
	return c.CPU, c.Known
}

// Trust tells the host that its agent may run until until (by this
// process's monotonic clock): the host's dead-man switch freezes the agent
// once that passes with no newer trust, and a newer one thaws it. It never
// blocks: one sender per client sends the newest deadline as the time left
// when it is sent, one request at a time, and drops a deadline that has
// passed. A host older than the request is not asked again.
func (cl *Client) Trust(until time.Time) {
	if cl.noTrust.Load() {
		return
	}
	cl.trustMu.Lock()
	defer cl.trustMu.Unlock()
	cl.trustUntil = until
	if !cl.trusting {
		cl.trusting = true
		go cl.sendTrust()
	}
}

func (cl *Client) sendTrust() {
	for {
		cl.trustMu.Lock()
		until := cl.trustUntil
		cl.trustUntil = time.Time{}
		if until.IsZero() {
			cl.trusting = false
			cl.trustMu.Unlock()
			return
		}
		cl.trustMu.Unlock()
		// The machine's clock is read before this process's: a stop
		// between the two readings makes the deadline earlier, never
		// later. Rounded down: the host never trusts its agent for
		// longer than the engine trusts itself.
		mono := monoNow()
		left := time.Until(until)
		ms := left.Milliseconds()
		if ms <= 0 {
			continue
		}
		q := trustReq{ForMS: ms}
		if mono > 0 {
			q.UntilMonoNS = mono + int64(left)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(ms)*time.Millisecond)
		_, err := cl.call(ctx, opTrust, q)
		cancel()
		if err != nil && strings.Contains(err.Error(), "unknown request") {
			cl.noTrust.Store(true)
			cl.trustMu.Lock()
			cl.trusting, cl.trustUntil = false, time.Time{}
			cl.trustMu.Unlock()
			return
		}
	}
}

// cpuWait bounds a CPU reading: a sample must not wait on a host that is
// slow to answer; the next one asks again.
const cpuWait = 2 * time.Second

// Pid returns the agent's process id, which is also its process group id.
func (cl *Client) Pid() int { return cl.welcome.Pid }

// HostPid returns the host's process id.
func (cl *Client) HostPid() int { return cl.welcome.HostPid }

// Changed receives (never blocking the client) after the screen changed.
// It has one reader: the coordinator.
func (cl *Client) Changed() <-chan struct{} { return cl.changed }

// Done is closed once the agent has exited, or the host was lost.
func (cl *Client) Done() <-chan struct{} { return cl.done }

// ExitCode returns the agent's exit status once Done is closed (128+N if
// signal N ended it; -1 when the host was lost), -1 before.
func (cl *Client) ExitCode() int {
	select {
	case <-cl.done:
	default:
		return -1
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.exit.Code
}

// Exit returns how and when the agent ended, and whether the host was
// lost instead (then nobody knows); nil before Done.
func (cl *Client) Exit() (e *Exit, lost bool) {
	select {
	case <-cl.done:
	default:
		return nil, false
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.exit, cl.lost
}

// HostLost reports, once Done is closed, whether the host died (or was
// killed) without reporting the agent's exit: the machine's failure, not
// the agent's.
func (cl *Client) HostLost() bool {
	_, lost := cl.Exit()
	return lost
}

// Stop ends the agent's whole process tree (its group, and every process
// carrying its session's mark): SIGTERM, then SIGKILL after grace. It
// returns once the host reported the exit, or a *session.RemainError
// naming the pids that outlived SIGKILL.
func (cl *Client) Stop(grace time.Duration) error {
	select {
	case <-cl.done:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*grace+callWait)
	defer cancel()
	_, err := cl.call(ctx, opStop, stopReq{Grace: grace})
	if errors.Is(err, ErrLost) {
		return nil // the host is gone, and the agent with it or beyond reach
	}
	select {
	case <-cl.done:
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("stop the session host (pid %d): no exit reported: %w", cl.welcome.HostPid, ctx.Err())
		}
	}
	return err
}

// Close collects the agent's exit, if it has exited, so the host goes
// away, and closes the connection. A live agent is left running.
func (cl *Client) Close() error {
	select {
	case <-cl.done:
		if cl.quick(opCollect, nil) == nil {
			// The host exits once it has answered: its end closes the
			// connection, so whoever closed this client sees no host left.
			t := time.NewTimer(collectWait)
			select {
			case <-cl.readDone:
			case <-t.C:
			}
			t.Stop()
		}
	default:
	}
	cl.Detach()
	return nil
}

// collectWait bounds the wait for a collected host to exit.
const collectWait = 5 * time.Second

// Detach closes the connection and leaves the agent running in its host,
// for another engine to adopt; Done is not closed by it.
func (cl *Client) Detach() {
	cl.mu.Lock()
	cl.detached = cl.exit == nil
	cl.mu.Unlock()
	cl.c.Close()
	<-cl.readDone
}

// view is a session.View over the host's screen: it reads the screen from
// the host only when the host has announced a newer version than the one
// it holds, so an idle pane costs nothing. It holds the screen as rows at
// the pty's width, as the host's emulator wrote them, and asks only for
// the rows that changed since its last read (opRows); the plain text only
// when Text is called, once per version. A host older than opRows is read
// whole (opScreen) and cut into rows here. A host that pushes rows
// (Client.push) keeps the view up to date from the connection's reader
// (pushed), and the view asks only for the text.
type view struct {
	cl   *Client
	mu   sync.Mutex
	have bool
	old  bool // the host does not know opRows
	// resyncing: pushed rows did not fit the rows held, and every row
	// has been asked for
	resyncing bool
	sc        rowsReply // the newest reply's screen, less its rows
	lines     []string
	seq       uint64 // the reply the rows are of, for the next request's Have
	// text is the plain text of the rows of textSeq
	text    string
	textOK  bool
	textSeq uint64
}

var (
	_ session.View         = (*view)(nil)
	_ session.ModeReporter = (*view)(nil)
	_ session.RowWriter    = (*view)(nil)
)

// screenWait bounds a screen read; past it the last screen read stands.
const screenWait = 5 * time.Second

// fresh brings the held screen up to the newest version the host
// announced, with its text when wantText; v.mu must be held.
func (v *view) fresh(wantText bool) {
	if v.cl.push {
		v.freshPushed(wantText)
		return
	}
	if v.have && v.sc.Version >= v.cl.version.Load() && (!wantText || v.textOK && v.textSeq == v.seq) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), screenWait)
	defer cancel()
	if !v.old {
		err := v.freshRows(ctx, wantText)
		if err == nil || !strings.Contains(err.Error(), "unknown request") {
			return
		}
		v.old = true
	}
	b, err := v.cl.call(ctx, opScreen, nil)
	if err != nil {
		return
	}
	var sc screen
	if json.Unmarshal(b, &sc) != nil {
		return
	}
	v.sc = rowsReply{Version: sc.Version, Cols: sc.Cols, Rows: sc.Rows, X: sc.X, Y: sc.Y, Cursor: sc.Cursor, Title: sc.Title, Modes: sc.Modes}
	v.lines = splitRows(sc.Render, sc.Cols, sc.Rows)
	v.seq++
	v.text, v.textOK, v.textSeq = sc.Text, true, v.seq
	v.have = true
	v.cl.noteVersion(sc.Version)
}

// freshRows asks for the rows changed since the held ones (all of them if
// the host no longer has those as its last reply).
func (v *view) freshRows(ctx context.Context, wantText bool) error {
	have := v.seq
	if !v.have {
		have = 0
	}
	for {
		b, err := v.cl.call(ctx, opRows, rowsReq{Have: have, Text: wantText})
		if err != nil {
			return err
		}
		var r rowsReply
		if err := wire.ReadBody(b, &r); err != nil {
			return err
		}
		lines, ok := applyRows(v.lines, r)
		if !ok {
			if have == 0 {
				return errors.New("the session host sent rows that do not fit its screen")
			}
			have = 0
			continue
		}
		v.lines, v.seq = lines, r.Seq
		if r.HasText {
			v.text, v.textSeq, v.textOK = r.Text, r.Seq, true
		}
		r.Lines, r.Set, r.Text = nil, nil, ""
		v.sc, v.have = r, true
		v.cl.noteVersion(r.Version)
		return nil
	}
}

// freshPushed asks a host that pushes rows for the text of its screen,
// when wantText and the rows held have none; the text comes as a push,
// which the reader applies before the reply. v.mu is let go meanwhile:
// the reader takes it to apply pushes.
func (v *view) freshPushed(wantText bool) {
	if !wantText || v.textOK && v.textSeq == v.seq {
		return
	}
	have := v.seq
	if !v.have {
		have = 0
	}
	v.mu.Unlock()
	defer v.mu.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), screenWait)
	defer cancel()
	_, _ = v.cl.call(ctx, opRows, rowsReq{Have: have, Text: true})
}

// pushed takes the rows a change notice carried. Notices apply in the
// order the host sent them, each over the rows of the one before; one
// that does not fit (never from a host of this version) leaves the rows
// held as they are and asks for every row, which come as a notice too.
func (v *view) pushed(r rowsReply) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cl.noteVersion(r.Version)
	lines, ok := applyRows(v.lines, r)
	if ok && r.Base != 0 && r.Base != v.seq {
		ok = false
	}
	if !ok {
		if !v.resyncing {
			v.resyncing = true
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), screenWait)
				defer cancel()
				if _, err := v.cl.call(ctx, opRows, rowsReq{}); err != nil {
					v.mu.Lock()
					v.resyncing = false // the next notice that does not fit asks again
					v.mu.Unlock()
				}
			}()
		}
		return
	}
	if r.Base == 0 {
		v.resyncing = false
	}
	v.lines, v.seq = lines, r.Seq
	if r.HasText {
		v.text, v.textSeq, v.textOK = r.Text, r.Seq, true
	}
	r.Lines, r.Set, r.Text = nil, nil, ""
	v.sc, v.have = r, true
}

func (v *view) held(wantText bool) rowsReply {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fresh(wantText)
	return v.sc
}

func (v *view) Size() (int, int) { sc := v.held(false); return sc.Cols, sc.Rows }
func (v *view) Title() string    { return v.held(false).Title }
func (v *view) Modes() vt.Modes  { return v.held(false).Modes }
func (v *view) Version() uint64  { return v.cl.version.Load() }

func (v *view) Cursor() (int, int, bool) {
	sc := v.held(false)
	return sc.X, sc.Y, sc.Cursor
}

// Render joins the held rows.
func (v *view) Render() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fresh(false)
	return strings.Join(v.lines, "\n")
}

// Text is the screen's plain text as the host's emulator gives it, asked
// for once per screen read.
func (v *view) Text() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fresh(true)
	if v.textOK && v.textSeq == v.seq {
		return v.text
	}
	return session.RowsText(v.lines) // the host did not answer: the rows held
}

// AppendRows appends rows from..from+n-1 of the held screen, each w
// columns wide: as the host wrote them when w is the pty's width, cut or
// padded otherwise.
func (v *view) AppendRows(dst []string, from, n, w int) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fresh(false)
	for y := from; y < from+n; y++ {
		l := ""
		if y >= 0 && y < len(v.lines) {
			l = v.lines[y]
			if w == v.sc.Cols {
				dst = append(dst, l)
				continue
			}
		}
		dst = append(dst, session.FitRow(l, w))
	}
	return dst
}

func (v *view) Scrollback(n int) []string {
	ctx, cancel := context.WithTimeout(context.Background(), screenWait)
	defer cancel()
	b, err := v.cl.call(ctx, opScrollback, nReq{N: n})
	if err != nil {
		return nil
	}
	var out []string
	_ = json.Unmarshal(b, &out)
	return out
}
