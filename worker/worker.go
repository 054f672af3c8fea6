// Package worker runs one session for one assignment: it prepares the
// worktree's state directory, launches and confirms the agent, delivers its
// input in order, watches for the artifact and the sentinel, validates the
// artifact, and reports what it sees to the coordinator. It writes no task
// state: every report carries the lease token, and the coordinator decides.
//
// A session's life, as the worker drives it:
//
//	Start ──launch──► launching ──ready marker + quiet──► confirmed ──brief──► working
//	   │                 │                                                      │
//	   └─ LaunchRefused ◄┘ (timeout / exit)           sentinel + valid artifact │
//	                                                  + idle screen ────────────┴──► PhaseFinished
//	   invalid artifact ──► refusal typed into the pane, sentinel removed ──► working
//	   process exit at any point ──► sentinel + valid artifact left? ──yes──► PhaseFinished, Exited
//	                                                                 └─no──► Exited, with why not
//
// A one-shot agent (`claude -p`, `codex exec`) ends by exiting: what it
// left decides, whatever its exit status. A harness with no ready marker is
// confirmed as soon as it runs; the coordinator takes a phase finished
// before confirmation as the confirmation.
package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/dirwatch"
	"github.com/orchestra-tui/orchestra-tui/jail"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// ReportKind names what a report tells the coordinator.
type ReportKind string

// Report kinds.
const (
	Confirmed      ReportKind = "confirmed"       // the launch was confirmed
	LaunchRefused  ReportKind = "launch-refused"  // the launch did not confirm; Refusal says why
	InputDelivered ReportKind = "input-delivered" // an input was typed into the pane; Input says which
	InputRefused   ReportKind = "input-refused"   // an input was typed but the agent never visibly took it; Refusal says what the screen shows
	Refused        ReportKind = "refused"         // the artifact was refused; the refusal was typed back
	PhaseFinished  ReportKind = "phase-finished"  // valid artifact + sentinel + idle screen
	Stuck          ReportKind = "stuck"           // the screen has not changed, nor the tree worked, for StuckAfter
	Unstuck        ReportKind = "unstuck"         // it changed again
	Exited         ReportKind = "exited"          // the process ended
	NeedsYou       ReportKind = "needs-you"       // the launch stopped at a dialog of the CLI's; Text quotes it
	Answered       ReportKind = "answered"        // the dialog is gone
	Limited        ReportKind = "limited"         // the screen shows a new limit of the provider's; Limit says which
	LimitGone      ReportKind = "limit-gone"      // no limit message shows any more (a CLI's own retry went through)
)

// Report is what a run tells the coordinator. Token fences it: a report
// whose token is no longer the task's current one is refused.
type Report struct {
	Kind      ReportKind
	TaskID    task.ID
	SessionID string
	Token     int64
	Phase     task.Phase
	Refusal   *task.Refusal
	Artifact  []byte
	Input     InputKind
	InputID   string // the decision id for decision inputs
	ExitCode  int
	// AfterExit marks a PhaseFinished found once the process had exited
	// (ExitCode is then its status).
	AfterExit bool
	Idle      time.Duration  // for Stuck: how long the screen has been still
	Text      string         // for NeedsYou: the dialog's name and its own text
	Limit     *session.Limit // for Limited: its kind, text and reset (zero when unknown)
	At        time.Time
}

// Params is one assignment.
type Params struct {
	TaskID    task.ID
	SessionID string
	Token     int64
	// Owner is the engine's owner mark (session.OwnerMark): its sessions
	// carry it, and its fencing sweeps stop its own processes only, never
	// those of another engine on this machine.
	Owner     string
	Phase     task.Phase
	Spec      session.Spec // already expanded
	Dir       string       // the task's worktree
	Base      string       // base commit, for the worktree fingerprint
	Cols      int
	Rows      int
	History   int // pane scrollback lines; 0 keeps none
	CastPath  string
	RecordMax int64    // the recording's size cap in bytes; 0: none
	Environ   []string // the console's environment, scrubbed by the session
	// Brief is passed as the last argv element when the harness delivers
	// by argument, and written to .orchestra/brief.md when it delivers by
	// file; other deliveries get it through Send after Confirmed.
	Brief string
	// SampleEvery is how often progress is sampled and stuck is checked.
	SampleEvery time.Duration
	// WorktreeEvery is how often a sample also fingerprints the worktree,
	// which runs git; zero means five samples. The screen is sampled every
	// time: it is in memory.
	WorktreeEvery time.Duration
	// StuckAfter is how long a still screen over an idle process tree
	// counts as stuck; 0 disables.
	StuckAfter time.Duration
	// Settle is how long the state directory must be quiet before the
	// sentinel is acted on (CREATE fires before content is written).
	Settle time.Duration
	// Changed returns the worktree's changed files (relative paths) since
	// Base. Injected so the worker does not depend on how git is read.
	Changed func(dir, base string) ([]string, error)
	Now     func() time.Time
	Reports chan<- Report
	// Launch starts the session; nil starts it in this process. An engine
	// that runs sessions in hosts sets it (host.Launcher).
	Launch Launcher
	// Gone, when closed, means nobody reads Reports any more (the
	// coordinator has returned): reports are dropped instead of blocking,
	// so a stopping session can always finish.
	Gone <-chan struct{}
}

// Run is one live session of an assignment.
type Run struct {
	p  Params
	wt *jail.Dir // the worktree, confined
	// launchedAt is the wall-clock time just before the program started:
	// an artifact older than it is not this session's.
	launchedAt time.Time
	sess       Session
	volatile   []*regexp.Regexp
	in         *inputQueue
	sample     atomic.Pointer[lease.Progress]
	finished   atomic.Bool
	// briefedAt is when the brief was typed (unix ns; 0 before): a pane
	// still waiting for its brief is waiting on the console, not stuck.
	briefedAt atomic.Int64
	// resample asks the sampler for a sample now; it closes the channel
	// sent once the sample is stored (see freshSample).
	resample chan chan struct{}
	// progressAt is when a sample last differed from the one before it
	// (unix ns): the operator's "last seen working".
	progressAt atomic.Int64
	// screenVersion is the screen version the last sample fingerprinted;
	// only the sampling goroutine (and Start, before it runs) touches it.
	screenVersion uint64
	// resize is what the sampling goroutine knows of the pty's last
	// resize, so a screen that changed only because of it is no progress.
	resize resizeSeen
	// stateSeen says the artifacts counted last are still those in the
	// state directory: the sentinel watch clears it on every change there.
	stateSeen atomic.Bool
	stopOnce  sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	// watchDone is closed when the sentinel watch has returned: the exit
	// is reported only after it, so a phase finished just before the exit
	// always reaches the coordinator first.
	watchDone chan struct{}
	// detached is closed when the run lets go of a session that keeps
	// running (Detach); doneOnce closes done on whichever path ends first.
	detached chan struct{}
	doneOnce sync.Once
	done     chan struct{}
}

// Start prepares the state directory and launches the session. The returned
// run reports through p.Reports until the process exits.
func Start(ctx context.Context, p Params) (*Run, error) {
	wt, volatile, err := openWorktree(&p)
	if err != nil {
		return nil, err
	}
	// Files are fenced as well as rows: whatever is left of an earlier
	// session of this task (a daemonised child of a killed console's
	// agent, say) is stopped before this one starts in the worktree, so it
	// cannot write this session's artifact (stopped before the old
	// sentinel and artifact are cleared, so it cannot write them again).
	// Only sessions before this one: a launch superseded while it was
	// prepared must not end its successor's agent.
	if err := session.StopMarked(p.Owner, string(p.TaskID), p.SessionID, fenceGrace); err != nil {
		wt.Close()
		return nil, &task.Refusal{Reason: task.ReasonLaunchFailed, Detail: "an earlier session's processes could not be stopped: " + err.Error()}
	}
	// A sentinel or artifact left by an earlier attempt must not finish
	// this one.
	for _, rel := range []string{task.SentinelPath, task.ArtifactPath(p.Phase), task.BriefPath} {
		if err := wt.Remove(rel); err != nil && !errors.Is(err, os.ErrNotExist) {
			wt.Close()
			return nil, outsideOr(err, fmt.Errorf("clear %s: %w", rel, err))
		}
	}
	// Watch before launching so nothing the agent writes is missed.
	changes, unwatch, err := watchState(p, wt)
	if err != nil {
		return nil, err
	}
	spec := p.Spec
	switch spec.Delivery {
	case session.DeliveryArg:
		spec.Argv = append(append([]string(nil), spec.Argv...), p.Brief)
	case session.DeliveryFile:
		if err := writeBrief(wt, p.Brief); err != nil {
			unwatch()
			wt.Close()
			return nil, outsideOr(err, err)
		}
	}
	if p.CastPath != "" {
		if err := os.MkdirAll(filepath.Dir(p.CastPath), 0o700); err != nil {
			unwatch()
			wt.Close()
			return nil, fmt.Errorf("prepare recording dir: %w", err)
		}
	}
	// A pane that takes its brief as a file says where it is above the
	// program's first output (a shell's first prompt stays the last line).
	var banner string
	if spec.Delivery == session.DeliveryFile {
		banner = briefNotice(p.Phase)
	}
	// The worktree is the product's own: the CLI is told it is trusted
	// before it starts, so it opens no "trust this folder?" dialog.
	if err := session.MarkTrusted(spec, p.Environ, p.Dir); err != nil {
		unwatch()
		wt.Close()
		return nil, &task.Refusal{Reason: task.ReasonLaunchFailed, Detail: err.Error()}
	}
	launchedAt := time.Now()
	launch := p.Launch
	if launch == nil {
		launch = launchInProcess
	}
	sess, err := launch(session.Params{
		Spec: spec, Dir: p.Dir, Cols: p.Cols, Rows: p.Rows, History: noHistory(p.History),
		Environ: p.Environ, CastPath: p.CastPath, Now: p.Now,
		TaskID: string(p.TaskID), SessionID: p.SessionID, Owner: p.Owner, RecordMax: p.RecordMax,
		Banner: banner,
	})
	if err != nil {
		unwatch()
		wt.Close()
		return nil, &task.Refusal{Reason: task.ReasonLaunchFailed, Detail: err.Error()}
	}
	r := newRun(ctx, p, wt, sess, volatile, launchedAt)
	if spec.Delivery == session.DeliveryArg || spec.Delivery == session.DeliveryFile {
		// It has the brief from its first instant, so corrections need
		// not wait for one.
		r.briefedAt.Store(p.Now().UnixNano())
		r.in.briefed = true
	}
	r.begin(true, changes, unwatch)
	return r, nil
}

// openWorktree fills in p's defaults, compiles its harness's volatile patterns and
// opens the worktree with its state directory made: the set-up a launched
// and an adopted session share. Every path the worker touches in the
// worktree goes through the jail: the agent owns the worktree and may have
// turned any of it into a symlink leading out.
func openWorktree(p *Params) (*jail.Dir, []*regexp.Regexp, error) {
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.SampleEvery <= 0 {
		p.SampleEvery = time.Second
	}
	if p.WorktreeEvery < p.SampleEvery {
		p.WorktreeEvery = 5 * p.SampleEvery
	}
	if p.Settle <= 0 {
		p.Settle = 100 * time.Millisecond
	}
	volatile, err := lease.CompileVolatile(p.Spec.Volatile)
	if err != nil {
		return nil, nil, fmt.Errorf("harness %s: %w", p.Spec.Name, err)
	}
	wt, err := jail.Open(p.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open worktree %s: %w", p.Dir, err)
	}
	if err := wt.MkdirAll(task.StateDir, 0o700); err != nil {
		wt.Close()
		return nil, nil, outsideOr(err, fmt.Errorf("prepare %s: %w", task.StateDir, err))
	}
	return wt, volatile, nil
}

// watchState watches the worktree's state directory, where the agent
// writes its artifact and sentinel; on failure it closes wt.
func watchState(p Params, wt *jail.Dir) (<-chan struct{}, func(), error) {
	stateDir := filepath.Join(p.Dir, task.StateDir)
	changes, unwatch, err := dirwatch.Dir(stateDir)
	if err != nil {
		wt.Close()
		return nil, nil, fmt.Errorf("watch %s: %w", stateDir, err)
	}
	return changes, unwatch, nil
}

func newRun(ctx context.Context, p Params, wt *jail.Dir, sess Session, volatile []*regexp.Regexp, launchedAt time.Time) *Run {
	ctx, cancel := context.WithCancel(ctx)
	r := &Run{p: p, wt: wt, launchedAt: launchedAt, sess: sess, volatile: volatile, ctx: ctx, cancel: cancel,
		watchDone: make(chan struct{}), detached: make(chan struct{}), done: make(chan struct{}),
		resample: make(chan chan struct{})}
	r.in = newInputQueue()
	first := r.takeSample(lease.Progress{}, true)
	r.sample.Store(&first)
	r.progressAt.Store(p.Now().UnixNano())
	return r
}

// begin starts the run's goroutines: the launch's confirmation when
// confirm is set, input delivery, the sentinel watch, the sampler and the
// exit's watch.
func (r *Run) begin(confirm bool, changes <-chan struct{}, unwatch func()) {
	ctx := r.ctx
	if confirm {
		go r.confirm(ctx)
	}
	go r.deliverInputs(ctx)
	// The worktree handle is released once its users have returned: the
	// watch, the sampler and the exit's last look at what the agent left.
	var users sync.WaitGroup
	users.Go(func() { defer unwatch(); r.watch(ctx, changes) })
	users.Go(func() { r.sampleLoop(ctx) })
	wt := r.wt
	go func() { users.Wait(); <-r.done; wt.Close() }()
	go r.waitExit()
}

// View returns the session's screen.
func (r *Run) View() session.View { return r.sess.View() }

// Sample returns the latest progress sample.
func (r *Run) Sample() lease.Progress { return *r.sample.Load() }

// LastProgress returns when the pane last made progress: the newest sample
// whose screen (volatile parts masked), worktree or artifacts differed from
// the sample before it; the launch before any.
func (r *Run) LastProgress() time.Time { return time.Unix(0, r.progressAt.Load()) }

// Done is closed when the process has exited and the run has reported it.
func (r *Run) Done() <-chan struct{} { return r.done }

// Stop ends the session: a polite signal to its process group, then a kill
// after grace. It returns once the process is gone.
func (r *Run) Stop(grace time.Duration) error {
	var err error
	r.stopOnce.Do(func() {
		r.finished.Store(true)
		err = r.sess.Stop(grace)
	})
	<-r.done
	return err
}

func (r *Run) report(rep Report) { r.p.Send(rep) }

// Send stamps rep with the assignment (task, session, token, phase, and
// the time if unset) and sends it on Reports; it is dropped once Gone is
// closed, so a stopping session never blocks on a coordinator that has
// returned. Workers, and the fakes that stand in for them, report this
// way.
func (p Params) Send(rep Report) {
	rep.TaskID, rep.SessionID, rep.Token, rep.Phase = p.TaskID, p.SessionID, p.Token, p.Phase
	if rep.At.IsZero() {
		rep.At = p.Now()
	}
	select {
	case p.Reports <- rep:
	case <-p.Gone:
	}
}

func (r *Run) confirm(ctx context.Context) {
	err := r.sess.WaitReady(ctx)
	if r.finished.Load() {
		return // the phase finished (or the run was stopped) first
	}
	if err == nil {
		r.report(Report{Kind: Confirmed})
		return
	}
	var ref *task.Refusal
	if !errors.As(err, &ref) {
		if ctx.Err() != nil {
			return
		}
		ref = &task.Refusal{Reason: task.ReasonLaunchNotConfirmed, Detail: err.Error()}
	}
	if ref.Reason == task.ReasonSessionExited || errors.Is(err, ErrHostLost) {
		return // waitExit reports the exit, with what the agent left behind
	}
	r.report(Report{Kind: LaunchRefused, Refusal: ref})
}

// waitExit reports the process's end. What the agent left decides what
// the exit means: a sentinel and a valid artifact finish the phase however
// the process ended (a one-shot agent ends by exiting); otherwise the exit
// carries the reason the phase is unfinished.
func (r *Run) waitExit() {
	select {
	case <-r.sess.Done():
	case <-r.detached:
		// Let go of with its agent running: nothing to report.
		r.cancel()
		<-r.watchDone
		r.in.close()
		r.closeDone()
		return
	}
	r.cancel()
	<-r.watchDone
	r.in.close()
	code := r.sess.ExitCode()
	var why *task.Refusal
	if !r.finished.Load() {
		data, ref := r.leftBehind(code)
		if ref == nil && r.finished.CompareAndSwap(false, true) {
			r.report(Report{Kind: PhaseFinished, Artifact: data, ExitCode: code, AfterExit: true})
		}
		why = ref
		if hs, ok := r.sess.(hostSession); ok && ref != nil && hs.HostLost() {
			why = task.Refuse(task.ReasonHostLost,
				"Its session host (pid %d) died, taking the agent with it: the machine's failure, not the task's.", hs.HostPid())
		}
	}
	r.report(Report{Kind: Exited, ExitCode: code, Refusal: why})
	if c, ok := r.sess.(closer); ok {
		// The exit is reported: a session host may go now, and is gone
		// before the run is done.
		_ = c.Close()
	}
	r.closeDone()
}

func (r *Run) closeDone() { r.doneOnce.Do(func() { close(r.done) }) }

// detach lets go of a session whose agent can outlive this process (a
// session host's), leaving it running for a later engine to adopt; any
// other session is stopped. It reports whether the agent was kept.
func (r *Run) detach(grace time.Duration) (bool, error) {
	d, ok := r.sess.(detacher)
	if !ok {
		return false, r.Stop(grace)
	}
	kept := false
	r.stopOnce.Do(func() {
		r.finished.Store(true)
		d.Detach()
		close(r.detached)
		kept = true
	})
	<-r.done
	return kept, nil
}

// fenceGrace is how long processes of an earlier session get to exit on
// SIGTERM before they are killed, when a new session of the task starts.
const fenceGrace = 2 * time.Second

// outsideOr turns a jail escape into the refusal the operator sees, and
// returns other otherwise.
func outsideOr(err, other error) error {
	if jail.IsEscape(err) {
		return &task.Refusal{Reason: task.ReasonPathOutside, Detail: err.Error() + "; nothing there was touched."}
	}
	return other
}

// noHistory maps the configuration's "0 keeps none" onto session.Params,
// where 0 means the default.
func noHistory(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// leftBehind reads what an exited agent left: the artifact when the
// sentinel and a valid artifact are there, else a refusal saying what is
// missing or wrong.
func (r *Run) leftBehind(code int) ([]byte, *task.Refusal) {
	data, err := task.ReadArtifactIn(r.wt, r.p.Phase)
	var ref *task.Refusal
	if err != nil && !errors.As(err, &ref) {
		ref = &task.Refusal{Reason: task.ReasonArtifactNotFile, Detail: err.Error()}
	}
	if !r.sentinelExists() {
		state := "and left no " + task.ArtifactPath(r.p.Phase)
		switch {
		case err == nil:
			state = "although " + task.ArtifactPath(r.p.Phase) + " is valid"
		case ref.Reason != task.ReasonArtifactMissing:
			state = "and its artifact was refused: " + ref.Detail
		}
		return nil, task.Refuse(task.ReasonSessionExited,
			"The agent exited with code %d without writing %s, %s.", code, task.SentinelPath, state)
	}
	if err == nil {
		err = r.checkOwnWork()
		if err != nil && !errors.As(err, &ref) {
			ref = &task.Refusal{Reason: task.ReasonArtifactNotFile, Detail: err.Error()}
		}
	}
	if err != nil {
		return nil, task.Refuse(ref.Reason, "The agent exited with code %d and its artifact was refused: %s", code, ref.Detail)
	}
	return data, nil
}
