package worker

import (
	"context"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// Handle is the coordinator's hold on one live session: the only way it
// reaches a session once started. The model is nomad's driver handle: the
// task runner keeps a handle it can let go of and, after a restart, take up
// again, without knowing whether the task runs in its own process or
// elsewhere.
//
// Two implementations stand behind it, the first over two kinds of
// session:
//
//	coord ──► Handle ─┬─► *Run ──► Session ─┬─► *session.Session  the pty in the engine (StartInProcess)
//	                  │                     └─► host's Client     the pty in a session host (package host)
//	                  └─► workertest.Fake                         an agent a test drives, under synctest
//
// The method set holds nothing that exists only in this process (no
// *session.Session): a remote implementation answers every call from what
// its host tells it. Reports (confirmed, phase finished, stuck, exited, ...)
// go to Params.Reports, not through the handle.
//
// Every method may be called from any goroutine, and at any point of the
// session's life: after the agent exited, input is refused with an error
// and the screen stays readable.
type Handle interface {
	// Send queues an input for the pane: the brief first, then the others
	// in arrival order (corrections are never typed before the brief they
	// correct). in.Done, when set, gets the typing's result once.
	Send(in Input)
	// Write types raw bytes into the pane, as the operator's keys in focus
	// mode.
	Write(b []byte) error
	// Paste types text as one paste, bracketed when the program asked for
	// bracketed paste.
	Paste(text string) error
	// Resize sets the pty's and the screen's size.
	Resize(cols, rows int) error
	// Size returns the pty's size: the launch size until a Resize.
	Size() (cols, rows int)
	// View returns the session's screen. It stays readable after the exit
	// (the last screen).
	View() session.View
	// Changed receives, without ever blocking the session, after the
	// screen changed. It has one reader: the coordinator.
	Changed() <-chan struct{}
	// Sample returns the latest progress sample, which the lease policy
	// compares with its baseline.
	Sample() lease.Progress
	// LastProgress returns when a sample last differed from the one before
	// it; the launch before any.
	LastProgress() time.Time
	// Pid returns the agent's process id, which is also its process group.
	Pid() int
	// ExitCode returns the agent's exit status once Done is closed (128+N
	// for signal N); -1 before.
	ExitCode() int
	// Stop ends the agent's whole process tree: a polite signal, then a
	// kill after grace. It returns once the agent is gone and Done is
	// closed, or with an error naming what could not be stopped. A second
	// call waits for the first.
	Stop(grace time.Duration) error
	// Detach lets go of the session without stopping its agent: this
	// engine stops watching and serving it, and a later engine may take it
	// up again. kept reports whether the agent keeps running; an
	// implementation whose agent cannot outlive the engine stops it instead
	// (with grace, as Stop) and returns kept false. Done is closed when
	// Detach returns.
	Detach(grace time.Duration) (kept bool, err error)
	// Done is closed once the session has ended for this engine (the agent
	// exited and its Exited report was sent, or it was detached).
	Done() <-chan struct{}
}

// Starter starts a session for an assignment and returns its handle. The
// coordinator takes one (coord.Params.Start), so an engine can run its
// sessions in process, in session hosts, or, in tests, as fakes.
type Starter func(ctx context.Context, p Params) (Handle, error)

// StartInProcess is the Starter whose sessions live in this process: Start,
// as a Handle.
func StartInProcess(ctx context.Context, p Params) (Handle, error) {
	r, err := Start(ctx, p)
	if err != nil {
		return nil, err // never a typed nil inside the interface
	}
	return r, nil
}

var _ Handle = (*Run)(nil)

// Write types raw bytes into the pane (focus mode's keys).
func (r *Run) Write(b []byte) error { return r.sess.Write(b) }

// Paste types text as one paste, bracketed when the program asked for it.
func (r *Run) Paste(text string) error { return r.sess.Paste(text) }

// Resize sets the pty's and the emulator's size.
func (r *Run) Resize(cols, rows int) error { return r.sess.Resize(cols, rows) }

// Size returns the pty's size.
func (r *Run) Size() (cols, rows int) { return r.sess.Size() }

// Changed receives after output reached the screen.
func (r *Run) Changed() <-chan struct{} { return r.sess.Changed() }

// Pid returns the agent's process id (and process group id).
func (r *Run) Pid() int { return r.sess.Pid() }

// truster is a session whose host freezes its agent unless it is trusted
// anew (a session host's client: its dead-man switch).
type truster interface{ Trust(until time.Time) }

// Trust lets the agent run until until, by this process's monotonic clock
// (coord.Truster): its session host freezes it past that with no newer
// trust. An in-process session has no host, and nothing to tell.
func (r *Run) Trust(until time.Time) {
	if t, ok := r.sess.(truster); ok {
		t.Trust(until)
	}
}

// ExitCode returns the agent's exit status once Done is closed; -1 before.
func (r *Run) ExitCode() int { return r.sess.ExitCode() }

// Detach lets go of the session. An in-process pty belongs to the engine
// and dies with it, so it is stopped (kept false); a session host's agent
// is left running for a later engine to adopt (kept true).
func (r *Run) Detach(grace time.Duration) (kept bool, err error) {
	return r.detach(grace)
}
