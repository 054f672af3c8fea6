package worker

import (
	"context"
	"errors"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// Session is what a run needs of a live agent session. *session.Session
// (the pty in this process) is one; a session host's client (package
// host: the pty in a process of its own that outlives the engine) is
// another. The worker's logic (confirm, ordered input, sentinel watch,
// samples, the exit's reading) is the same over both.
type Session interface {
	View() session.View
	Write(b []byte) error
	Paste(text string) error
	// Notice shows a line in the pane without sending it to the agent.
	Notice(line string) error
	// WaitReady confirms the launch: the ready marker, then a quiet screen.
	WaitReady(ctx context.Context) error
	// DeliverChecked, SendChecked and SubmitChecked type and confirm the
	// agent took what was typed (session.Session's doc says how).
	DeliverChecked(ctx context.Context, text string) error
	SendChecked(ctx context.Context, text string) error
	SubmitChecked(ctx context.Context) error
	Resize(cols, rows int) error
	Size() (cols, rows int)
	Pid() int
	Changed() <-chan struct{}
	// Done is closed once the agent has exited and its tree is torn down.
	Done() <-chan struct{}
	ExitCode() int
	Stop(grace time.Duration) error
}

// ErrHostLost is what a call into a session host that died returns
// (host.ErrLost): the connection ended without the agent's exit.
var ErrHostLost = errors.New("the session host is gone")

// hostSession is a Session whose pty lives in a session host, which can
// die under its agent (host's Client). HostLost, once Done is closed,
// reports whether the host was lost rather than the agent exiting.
type hostSession interface {
	HostPid() int
	HostLost() bool
}

// Launcher starts the session an assignment describes. Params.Launch
// takes one; nil starts it in this process (session.Start).
type Launcher func(p session.Params) (Session, error)

var _ Session = (*session.Session)(nil)

func launchInProcess(p session.Params) (Session, error) {
	s, err := session.Start(p)
	if err != nil {
		return nil, err // never a typed nil inside the interface
	}
	return s, nil
}

// detacher is a session that can be let go of with its agent running (a
// session host's client).
type detacher interface{ Detach() }

// closer is a session that wants to hear when its run has read the exit
// (a session host's client: the host may go then).
type closer interface{ Close() error }

// HostPid returns the pid of the session host the agent runs in, 0 when it
// runs in this process.
func (r *Run) HostPid() int {
	if h, ok := r.sess.(interface{ HostPid() int }); ok {
		return h.HostPid()
	}
	return 0
}
