// Package workertest is a fake session behind worker.Handle, for testing the
// coordinator without a pty, a process or a wall clock. A Fake does nothing
// by itself but what a worker does on its own (type queued input in order,
// flag a still screen as stuck after StuckAfter, report its exit); everything
// an agent would do, the test makes it do: confirm, draw, finish a phase,
// go still, exit. Its clocks are the time package's, so under
// testing/synctest a lease of twenty minutes runs out in a moment, at exactly
// its deadline.
//
//	agents := workertest.NewFactory(t)
//	c, _ := coord.New(coord.Params{..., Start: agents.Start})
//	a := agents.Next()   // the next session the coordinator starts
//	a.Confirm()          // its ready marker settled
//	a.NextInput()        // the brief, as the coordinator sent it
//	a.Work("editing calc.go")
//	a.Finish(nil)        // the phase's example artifact
package workertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// Exit codes a fake reports when it is stopped: as a process killed by
// SIGTERM or SIGKILL would (128+N).
const (
	ExitTerm = 128 + 15
	ExitKill = 128 + 9
)

// firstPid is above Linux's largest pid (pid_max is at most 2^22), so a
// fake's pid never names a real process.
const firstPid = 1 << 22

// Patience is how long Next and NextInput wait before they fail the test.
// Inside a synctest bubble it is simulated time, so a wait that can never
// end fails at once instead of spinning the bubble's tickers for ever.
const Patience = 24 * time.Hour

// Factory starts fakes: its Start is a worker.Starter. Make it inside the
// test's synctest bubble, since its channels belong to the bubble they are
// made in.
type Factory struct {
	tb      testing.TB
	started chan *Fake

	mu     sync.Mutex
	n      int
	refuse func(worker.Params) error
	all    []*Fake
}

// NewFactory returns a factory with no sessions yet; tb is failed when a
// wait runs out of Patience.
func NewFactory(tb testing.TB) *Factory { return &Factory{tb: tb, started: make(chan *Fake, 64)} }

// Refuse makes every later Start call f first, and fail with its error when
// it returns one (a launch the machine refused, say).
func (fa *Factory) Refuse(f func(worker.Params) error) {
	fa.mu.Lock()
	defer fa.mu.Unlock()
	fa.refuse = f
}

// Start is the worker.Starter: it starts a fake session for p and hands it
// to Next.
func (fa *Factory) Start(ctx context.Context, p worker.Params) (worker.Handle, error) {
	fa.mu.Lock()
	refuse := fa.refuse
	fa.n++
	n := fa.n
	fa.mu.Unlock()
	if refuse != nil {
		if err := refuse(p); err != nil {
			return nil, err
		}
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	f := newFake(fa.tb, p, firstPid+n)
	fa.mu.Lock()
	fa.all = append(fa.all, f)
	fa.mu.Unlock()
	fa.started <- f
	return f, nil
}

// Adopt is Start for a session an earlier engine launched, confirmed and
// briefed, taken up again (coord.Hosts): the fake has its brief from the
// start, so its stuck clock runs from now.
func (fa *Factory) Adopt(ctx context.Context, p worker.Params) (worker.Handle, error) {
	h, err := fa.Start(ctx, p)
	if err != nil {
		return nil, err
	}
	f := h.(*Fake)
	f.mu.Lock()
	f.briefed, f.briefedAt = true, f.p.Now()
	f.mu.Unlock()
	signal(f.wake)
	return f, nil
}

// Next returns the next session started, waiting for it (at most
// Patience). Call it from the test's goroutine.
func (fa *Factory) Next() *Fake {
	fa.tb.Helper()
	guard := time.NewTimer(Patience)
	defer guard.Stop()
	select {
	case f := <-fa.started:
		return f
	case <-guard.C:
		fa.tb.Fatalf("workertest: no session started within %s", Patience)
		return nil
	}
}

// All returns every session started so far, in order.
func (fa *Factory) All() []*Fake {
	fa.mu.Lock()
	defer fa.mu.Unlock()
	return append([]*Fake(nil), fa.all...)
}

// Fake is one fake session. Its methods in worker.Handle are what the
// coordinator calls; the others are the test's hands on the agent.
type Fake struct {
	tb      testing.TB
	p       worker.Params
	pid     int
	changed chan struct{} // to the coordinator, as session.Changed
	wake    chan struct{} // to the fake's own goroutine: input queued, screen changed
	typedC  chan struct{} // to the test: an input was typed
	done    chan struct{}

	mu         sync.Mutex
	cols, rows int
	screen     string
	version    uint64
	sample     lease.Progress
	progressAt time.Time
	stillSince time.Time // when the screen last changed
	briefed    bool
	briefedAt  time.Time
	stuck      bool
	finished   bool // the phase was reported finished: no stuck flags after it
	ended      bool // stopped, exited or detached
	exitCode   int
	ignoreTerm bool
	queue      []worker.Input
	typed      []worker.Input
	read       int // typed inputs the test has taken with NextInput
	written    []byte
	pasted     []string
	resizes    [][2]int
	stopGrace  []time.Duration
	detached   bool
	echo       bool            // typed inputs show on the screen (EchoInputs)
	cpu        time.Duration   // the tree's CPU time, as BurnCPU drove it
	meter      worker.CPUMeter // what a worker's sampler makes of cpu
	busyAt     time.Time       // when the tree last counted as working
}

func newFake(tb testing.TB, p worker.Params, pid int) *Fake {
	now := p.Now()
	f := &Fake{
		tb: tb, p: p, pid: pid, cols: p.Cols, rows: p.Rows,
		changed: make(chan struct{}, 1), wake: make(chan struct{}, 1),
		typedC: make(chan struct{}, 1), done: make(chan struct{}),
		exitCode: -1, progressAt: now, stillSince: now,
	}
	f.sample = lease.Progress{Screen: lease.ScreenFingerprint("", nil), At: now}
	if p.Spec.Delivery == session.DeliveryArg || p.Spec.Delivery == session.DeliveryFile {
		// It has its brief from the start, as a worker's session does.
		f.briefed, f.briefedAt = true, now
	}
	go f.run()
	return f
}

// Params returns the assignment the coordinator started the session with.
func (f *Fake) Params() worker.Params { return f.p }

// report sends a report the way a worker does: stamped with the session's
// assignment, dropped once nobody reads reports any more.
func (f *Fake) report(rep worker.Report) { f.p.Send(rep) }

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Confirm reports that the agent's prompt showed and settled.
func (f *Fake) Confirm() { f.report(worker.Report{Kind: worker.Confirmed}) }

// NeedsYou reports that the launch stopped at a dialog of the CLI's,
// quoting it as text; Answered reports that it is gone.
func (f *Fake) NeedsYou(text string) { f.report(worker.Report{Kind: worker.NeedsYou, Text: text}) }

// Answered reports that the dialog NeedsYou reported is gone.
func (f *Fake) Answered() { f.report(worker.Report{Kind: worker.Answered}) }

// Limited reports that the screen shows a limit of the provider's.
func (f *Fake) Limited(l session.Limit) {
	f.report(worker.Report{Kind: worker.Limited, Limit: &l, Text: string(l.Kind) + ": " + l.Text})
}

// LimitGone reports that no limit message shows any more.
func (f *Fake) LimitGone() { f.report(worker.Report{Kind: worker.LimitGone}) }

// RefuseLaunch reports that the launch did not confirm, with why.
func (f *Fake) RefuseLaunch(why *task.Refusal) {
	f.report(worker.Report{Kind: worker.LaunchRefused, Refusal: why})
}

// Work draws screen as the agent's new screen: progress for the lease, and
// the end of a stuck spell.
func (f *Fake) Work(screen string) {
	f.mu.Lock()
	now := f.p.Now()
	f.screen = screen
	f.version++
	f.sample = lease.Progress{Screen: lease.ScreenFingerprint(screen, nil), Worktree: f.sample.Worktree, Artifacts: f.sample.Artifacts, At: now,
		CPU: f.sample.CPU}
	f.progressAt, f.stillSince = now, now
	wasStuck := f.stuck
	f.stuck = false
	f.mu.Unlock()
	signal(f.changed)
	signal(f.wake)
	if wasStuck {
		f.report(worker.Report{Kind: worker.Unstuck})
	}
}

// EchoInputs makes every input typed from now on show on the screen, as
// a real pane echoes what is typed into it: the brief's echo is then a
// change of screen the coordinator must not take for progress.
func (f *Fake) EchoInputs() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.echo = true
}

// BurnCPU has the agent's process tree use d of CPU time now, drawing
// nothing: the CPU meter a test drives. The fake samples it as a worker
// does (worker.CPUMeter over lease.CPUWindow): a tree that works is not
// stuck, and its sample's CPU time is progress for the lease.
func (f *Fake) BurnCPU(d time.Duration) {
	f.mu.Lock()
	now := f.p.Now()
	f.cpu += d
	f.meter.Add(now, f.cpu)
	quietFrom := f.stillSince
	if f.briefedAt.After(quietFrom) {
		quietFrom = f.briefedAt
	}
	from := now.Add(-worker.StuckWindow(f.p.StuckAfter))
	if quietFrom.After(from) {
		from = quietFrom
	}
	working := f.meter.Working(from) > 0
	if quietFrom.Before(now.Add(-lease.CPUWindow)) {
		quietFrom = now.Add(-lease.CPUWindow)
	}
	f.sample.CPU, f.sample.Working, f.sample.At = f.meter.Total(), f.meter.Working(quietFrom), now
	f.sample.Still = now.Sub(f.stillSince)
	if working {
		f.busyAt, f.progressAt = now, now
	}
	wasStuck := f.stuck && working
	if wasStuck {
		f.stuck = false
	}
	f.mu.Unlock()
	signal(f.wake)
	if wasStuck {
		f.report(worker.Report{Kind: worker.Unstuck})
	}
}

// Finish reports the phase finished with artifact (the phase's example
// artifact when nil), as a worker does once the sentinel, a valid artifact
// and an idle screen are there.
func (f *Fake) Finish(artifact []byte) {
	if artifact == nil {
		artifact = []byte(task.Example(f.p.Phase))
	}
	f.mu.Lock()
	f.finished = true
	f.mu.Unlock()
	f.report(worker.Report{Kind: worker.PhaseFinished, Artifact: artifact})
}

// Refuse reports that the agent's artifact was refused (and the refusal
// typed back into its pane).
func (f *Fake) Refuse(why *task.Refusal) {
	f.report(worker.Report{Kind: worker.Refused, Refusal: why})
}

// Exit ends the agent on its own with code; why, when set, is what it left
// unfinished, as a worker reports it. It returns once the exit is reported.
func (f *Fake) Exit(code int, why *task.Refusal) {
	if !f.end(code) {
		return
	}
	f.report(worker.Report{Kind: worker.Exited, ExitCode: code, Refusal: why})
	close(f.done)
}

// IgnoreTerm makes the agent ignore the polite signal: a Stop then takes
// its whole grace and kills it.
func (f *Fake) IgnoreTerm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ignoreTerm = true
}

// end marks the agent gone with code, once; it reports whether this call
// did it. Inputs still queued fail with worker.ErrClosed.
func (f *Fake) end(code int) bool {
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		return false
	}
	f.ended, f.exitCode = true, code
	queue := f.queue
	f.queue = nil
	f.mu.Unlock()
	for _, in := range queue {
		if in.Done != nil {
			in.Done <- worker.ErrClosed
		}
	}
	signal(f.wake)
	signal(f.changed)
	return true
}

// NextInput returns the next input typed into the pane that the test has
// not taken yet, in the order typed, waiting for it (at most Patience).
// Call it from the test's goroutine.
func (f *Fake) NextInput() worker.Input {
	f.tb.Helper()
	guard := time.NewTimer(Patience)
	defer guard.Stop()
	for {
		f.mu.Lock()
		if f.read < len(f.typed) {
			in := f.typed[f.read]
			f.read++
			f.mu.Unlock()
			return in
		}
		f.mu.Unlock()
		select {
		case <-f.typedC:
		case <-guard.C:
			f.tb.Fatalf("workertest: session %s was typed nothing more within %s", f.p.SessionID, Patience)
			return worker.Input{}
		}
	}
}

// Typed returns every input typed into the pane so far, in order.
func (f *Fake) Typed() []worker.Input {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]worker.Input(nil), f.typed...)
}

// Written returns the raw bytes typed with Write (focus mode's keys).
func (f *Fake) Written() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]byte(nil), f.written...)
}

// Resizes returns every size the pane was given after the launch.
func (f *Fake) Resizes() [][2]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][2]int(nil), f.resizes...)
}

// Stops returns the grace of every Stop call, in order.
func (f *Fake) Stops() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.stopGrace...)
}

// Stuck reports whether the fake has reported itself stuck and not drawn
// since.
func (f *Fake) Stuck() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stuck
}

// run is what a worker does by itself: type queued inputs in order (the
// brief first) and flag a screen still for StuckAfter since the brief
// and since the tree last worked (BurnCPU).
func (f *Fake) run() {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		f.deliver()
		f.mu.Lock()
		if f.ended {
			f.mu.Unlock()
			return
		}
		var wait time.Duration = -1
		var idle time.Duration
		if f.p.StuckAfter > 0 && f.briefed && !f.stuck && !f.finished {
			since := f.stillSince
			if f.briefedAt.After(since) {
				since = f.briefedAt
			}
			if f.busyAt.After(since) {
				since = f.busyAt
			}
			idle = f.p.Now().Sub(since)
			wait = max(f.p.StuckAfter-idle, 0)
			if wait == 0 {
				f.stuck = true
			}
		}
		f.mu.Unlock()
		if wait == 0 {
			f.report(worker.Report{Kind: worker.Stuck, Idle: idle})
			continue
		}
		var fire <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			fire = timer.C
		}
		select {
		case <-f.wake:
		case <-fire:
		}
	}
}

// deliver types every input that may be typed now: the brief first, the
// others once the brief is in.
func (f *Fake) deliver() {
	for {
		f.mu.Lock()
		i := -1
		for j, in := range f.queue {
			if in.Kind == worker.InputBrief || f.briefed {
				i = j
				break
			}
		}
		if i < 0 || f.ended {
			f.mu.Unlock()
			return
		}
		in := f.queue[i]
		f.queue = append(f.queue[:i:i], f.queue[i+1:]...)
		now := f.p.Now()
		if in.Kind == worker.InputBrief {
			f.briefed, f.briefedAt = true, now
		}
		if f.echo {
			// The echo changes the screen, as typing does in a pane, but
			// is no work of the agent's: neither progress nor the end of
			// a stuck spell. The sample holds it before the delivery is
			// reported, as a worker's does.
			f.screen = strings.TrimPrefix(f.screen+"\n"+in.Text, "\n")
			f.version++
			f.sample.Screen, f.sample.At = lease.ScreenFingerprint(f.screen, nil), now
		}
		f.typed = append(f.typed, in)
		f.mu.Unlock()
		if in.Done != nil {
			in.Done <- nil
		}
		f.report(worker.Report{Kind: worker.InputDelivered, Input: in.Kind, InputID: in.ID})
		signal(f.typedC)
	}
}

var _ worker.Handle = (*Fake)(nil)

// Send queues an input; the fake types it in order, as a worker does.
func (f *Fake) Send(in worker.Input) {
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		if in.Done != nil {
			in.Done <- worker.ErrClosed
		}
		return
	}
	f.queue = append(f.queue, in)
	f.mu.Unlock()
	signal(f.wake)
}

// errEnded is what input to an ended fake gets.
var errEnded = errors.New("workertest: the session has ended")

// Write records raw bytes typed into the pane.
func (f *Fake) Write(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return errEnded
	}
	f.written = append(f.written, b...)
	return nil
}

// Paste records text pasted into the pane.
func (f *Fake) Paste(text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return errEnded
	}
	f.pasted = append(f.pasted, text)
	return nil
}

// Resize records the pane's new size.
func (f *Fake) Resize(cols, rows int) error {
	if cols <= 0 || rows <= 0 {
		return fmt.Errorf("workertest: size %dx%d is not positive", cols, rows)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if cols == f.cols && rows == f.rows {
		return nil
	}
	f.cols, f.rows = cols, rows
	f.resizes = append(f.resizes, [2]int{cols, rows})
	f.version++
	return nil
}

// Size returns the pane's size.
func (f *Fake) Size() (cols, rows int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cols, f.rows
}

// View returns the screen the test last drew.
func (f *Fake) View() session.View { return view{f} }

// Changed receives after Work drew a new screen.
func (f *Fake) Changed() <-chan struct{} { return f.changed }

// Sample returns the progress the test's Work calls made.
func (f *Fake) Sample() lease.Progress {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sample
}

// LastProgress returns when Work last drew; the start before.
func (f *Fake) LastProgress() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.progressAt
}

// Pid returns the fake's pid, which no real process has.
func (f *Fake) Pid() int { return f.pid }

// ExitCode returns the exit status once Done is closed; -1 before.
func (f *Fake) ExitCode() int {
	select {
	case <-f.done:
	default:
		return -1
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exitCode
}

// Stop ends the agent as SIGTERM would; one that ignores it (IgnoreTerm)
// is killed after grace. Like a worker, it reports the exit before it
// returns.
func (f *Fake) Stop(grace time.Duration) error {
	f.mu.Lock()
	f.stopGrace = append(f.stopGrace, grace)
	stubborn := f.ignoreTerm && !f.ended
	f.mu.Unlock()
	code := ExitTerm
	if stubborn {
		timer := time.NewTimer(grace)
		select {
		case <-timer.C:
			code = ExitKill
		case <-f.done: // it exited on its own meanwhile
		}
		timer.Stop()
	}
	if f.end(code) {
		f.report(worker.Report{Kind: worker.Exited, ExitCode: code})
		close(f.done)
	}
	<-f.done
	return nil
}

// Detach stops the fake, as the in-process implementation's Detach does:
// a fake agent cannot outlive its test.
func (f *Fake) Detach(grace time.Duration) (kept bool, err error) {
	f.mu.Lock()
	f.detached = true
	f.mu.Unlock()
	return false, f.Stop(grace)
}

// Done is closed once the agent has ended and its exit was reported.
func (f *Fake) Done() <-chan struct{} { return f.done }

// view is the fake's screen as a session.View: plain text, no styles.
type view struct{ f *Fake }

func (v view) Size() (cols, rows int) { return v.f.Size() }

func (v view) Render() string { return v.Text() }

func (v view) Text() string {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	lines := strings.Split(v.f.screen, "\n")
	for len(lines) < v.f.rows {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (v view) Cursor() (x, y int, visible bool) { return 0, 0, false }

func (v view) Title() string { return "" }

func (v view) Scrollback(n int) []string { return nil }

func (v view) Version() uint64 {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	return v.f.version
}
