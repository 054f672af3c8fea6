// Package agent is the scripted agent: a fake agent CLI built into the
// orchestra-tui binary (`orchestra-tui agent --script FILE`) so the demo and
// the end-to-end tests need nothing installed. It behaves like a real agent
// on a terminal — raw mode, bracketed paste, a ready prompt, paced output
// with spinners and diffs — and reads its briefs only by the names in
// task/brief.go, so the brief contract is exercised for real.
//
// A session's life:
//
//	banner, prompt ──► message submitted ──► human decision: echo, log, prompt
//	       ▲                  │          └─► REFUSED:…: rewrite artifact + sentinel
//	       │                  ▼
//	       └──── prompt ◄── brief: follow the script for its phase and attempt
//	                        (edits, artifact, sentinel, verify) — or stall,
//	                        crash, flood, ignore it once, as the script says
package agent

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// ReadyMarker is the prompt the agent draws when it is ready for input; the
// scripted harness's ready pattern matches it.
const ReadyMarker = "scripted-agent ❯ "

// Exit statuses of Main besides CrashExitCode.
const (
	exitOK        = 0
	exitUsage     = 2
	exitInterrupt = 130
)

// Main runs the scripted agent with args (flags only), reading keys from
// stdin and drawing on stdout — normally both the pty's tty. It returns the
// process exit status. If stdin is a terminal it is put in raw mode for the
// agent's lifetime, as a real agent CLI does.
func Main(args []string, stdin io.Reader, stdout io.Writer) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stdout)
	scriptPath := fs.String("script", "", "JSON script of phases and behaviours (default: do every phase with the example artifact)")
	paceMS := fs.Int("pace-ms", -1, "pacing unit in milliseconds, overriding the script's pace_ms (0: no delays)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	var sc Script
	if *scriptPath != "" {
		var err error
		if sc, err = LoadScript(*scriptPath); err != nil {
			fmt.Fprintf(stdout, "scripted-agent: %v\r\n", err)
			return exitUsage
		}
	}
	if *paceMS >= 0 {
		sc.PaceMS = paceMS
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stdout, "scripted-agent: working directory: %v\r\n", err)
		return exitUsage
	}

	raw := false
	if f, ok := stdin.(interface{ Fd() uintptr }); ok && term.IsTerminal(f.Fd()) {
		st, err := term.MakeRaw(f.Fd())
		if err != nil {
			fmt.Fprintf(stdout, "scripted-agent: raw mode: %v\r\n", err)
			return exitUsage
		}
		defer term.Restore(f.Fd(), st) //nolint:errcheck // best effort on the way out
		raw = true
	}
	a := &agent{
		script: sc,
		cwd:    cwd,
		out:    stdout,
		raw:    raw,
		rec:    recorder{dir: sc.RecordDir, now: time.Now},
		sleep:  time.Sleep,
		work:   make(chan job, 64),

		decided: make(chan struct{}),

		interrupt: make(chan struct{}, 1),
	}
	io.WriteString(stdout, enableBracketed) //nolint:errcheck // a broken tty shows up on the next write
	defer io.WriteString(stdout, disableBracketed)
	return a.run(stdin)
}

// jobKind tells the worker loop what to do.
type jobKind int

const (
	jobBrief jobKind = iota
	jobRefusal
	jobEOF
)

// job is one unit of work for the worker loop.
type job struct {
	kind  jobKind
	brief Brief
	entry Entry
	text  string
}

// agent is one running scripted agent.
type agent struct {
	script Script
	cwd    string
	rec    recorder
	sleep  func(time.Duration)
	work   chan job
	// interrupt receives ctrl-c; it is served before any queued job.
	interrupt chan struct{}
	// decided is closed when the first human decision has been echoed; a
	// stall with await_decision waits for it.
	decided chan struct{}

	mu      sync.Mutex // guards everything below and every write to out
	out     io.Writer
	raw     bool // out is a raw tty: "\n" must be written as "\r\n"
	pending int  // jobs queued or running: the prompt is drawn when it is 0
	stalled bool // a stall began: draw nothing, act on nothing, ever again
	ignored bool // ignore_first has ignored its brief in this process
	// held is the brief ignore_first ignored; a bare submit acts on it.
	held *job
	// current is the phase attempt acted on last; a refusal fixes it.
	current *job
	pastes  int // pastes seen, numbered on screen as a real agent does
	// hasDecided says decided is closed; awaiting says a stall waits on it.
	hasDecided bool
	awaiting   bool
	outbox     []job // jobs to hand to the worker once a.mu is released
}

// run draws the banner and prompt, reads input on its own goroutine and
// works through submitted jobs one at a time on another. Ctrl-C ends the
// agent at once, even mid-phase or stalled, as it would a real agent CLI.
func (a *agent) run(stdin io.Reader) int {
	a.banner()
	a.prompt()
	done := make(chan int, 1)
	go func() { done <- a.workLoop() }()
	go a.readInput(stdin)
	select {
	case code := <-done:
		return code
	case <-a.interrupt:
		a.mu.Lock()
		a.write("\n^C interrupted\n")
		a.mu.Unlock()
		return exitInterrupt
	}
}

// workLoop does the queued jobs in order and returns the exit status.
func (a *agent) workLoop() int {
	for j := range a.work {
		switch j.kind {
		case jobEOF:
			return exitOK
		case jobBrief:
			if code, exit := a.doPhase(j); exit {
				return code
			}
		case jobRefusal:
			a.fixAfterRefusal(j.text)
		}
		a.mu.Lock()
		a.pending--
		if a.pending == 0 && !a.stalled {
			a.write(ReadyMarker)
		}
		a.mu.Unlock()
	}
	return exitOK
}

// readInput feeds stdin to the input parser and turns its events into
// screen echo, log records and jobs.
func (a *agent) readInput(stdin io.Reader) {
	var p inputParser
	buf := make([]byte, 4096)
	for {
		n, err := stdin.Read(buf)
		for _, ev := range p.feed(buf[:n]) {
			a.onInput(ev)
		}
		if err != nil {
			a.work <- job{kind: jobEOF}
			return
		}
	}
}

// onInput handles one input event. Jobs are handed to the worker loop
// after the lock is released, since the worker takes it to draw.
func (a *agent) onInput(ev inputEvent) {
	a.mu.Lock()
	a.handle(ev)
	out := a.outbox
	a.outbox = nil
	a.mu.Unlock()
	for _, j := range out {
		a.work <- j
	}
}

// handle does the work of onInput. Called with a.mu held.
func (a *agent) handle(ev inputEvent) {
	switch ev.kind {
	case inInterrupt:
		select {
		case a.interrupt <- struct{}{}:
		default: // already interrupting
		}
		return
	case inEOF:
		a.outbox = append(a.outbox, job{kind: jobEOF})
		return
	case inSubmit:
		a.onSubmit(ev.text)
		return
	}
	if a.stalled {
		return
	}
	switch ev.kind {
	case inEcho:
		a.write(ev.text)
	case inErase:
		a.write("\b \b")
	case inPasted:
		if a.wouldIgnore(ev.text) {
			return
		}
		a.pastes++
		a.write(fmt.Sprintf("[Pasted text #%d +%d lines]", a.pastes, ev.lines))
	}
}

// wouldIgnore reports whether text, submitted now, is the brief that
// ignore_first is to ignore; such a brief is not even echoed. Called with
// a.mu held.
func (a *agent) wouldIgnore(text string) bool {
	if a.ignored || !strings.Contains(text, task.HeadingPhasePrefix) {
		return false
	}
	b, err := ParseBrief(text)
	return err == nil && a.script.entry(b.Phase, b.Attempt).Behave == BehaveIgnoreFirst
}

// onSubmit classifies a submitted message, logs it, and answers it or
// queues the work it asks for. Called with a.mu held.
func (a *agent) onSubmit(text string) {
	switch {
	case strings.HasPrefix(text, task.DecisionHeader):
		a.log(InputDecision, text)
		if a.stalled {
			return
		}
		a.write("\nreceived human decision: " + strings.TrimSpace(strings.TrimPrefix(text, task.DecisionHeader)) + "\n")
		a.promptIfIdle()
		if !a.hasDecided {
			a.hasDecided = true
			// A stall waiting for this decision goes silent from here,
			// in the same breath, so nothing after it is echoed.
			a.stalled = a.awaiting
			close(a.decided)
		}
	case strings.HasPrefix(text, task.RefusalPrefix):
		a.log(InputRefusal, text)
		if a.stalled {
			return
		}
		a.write("\n")
		a.queue(job{kind: jobRefusal, text: text})
	case strings.TrimSpace(text) == "":
		a.log(InputOther, text)
		if a.stalled {
			return
		}
		if a.held != nil {
			// A bare submit nudges the brief ignore_first sat on.
			j := *a.held
			a.held = nil
			a.write("\n")
			a.queue(j)
			return
		}
		a.write("\n")
		a.promptIfIdle()
	default:
		b, err := ParseBrief(text)
		if err != nil {
			a.log(InputOther, text)
			if a.stalled {
				return
			}
			a.write("\n✗ I could not read that brief: " + err.Error() + "\n")
			a.promptIfIdle()
			return
		}
		a.log(InputBrief, text)
		if err := a.rec.brief(b); err != nil {
			a.write("\n✗ " + err.Error() + "\n")
		}
		if a.stalled {
			return
		}
		j := job{kind: jobBrief, brief: b, entry: a.script.entry(b.Phase, b.Attempt)}
		if j.entry.Behave == BehaveIgnoreFirst && !a.ignored {
			a.ignored = true
			a.held = &j
			return
		}
		a.held = nil
		a.write("\n")
		a.queue(j)
	}
}

// queue hands j to the worker loop once the lock is released. Called with
// a.mu held.
func (a *agent) queue(j job) {
	a.pending++
	a.outbox = append(a.outbox, j)
}

// log records a submitted message; a failure shows on screen, since the
// record is what tests and the demo's checks rely on. Called with a.mu held.
func (a *agent) log(kind, text string) {
	if err := a.rec.input(kind, text); err != nil {
		a.write("\n✗ " + err.Error() + "\n")
	}
}

// promptIfIdle redraws the prompt when no job is queued or running.
// Called with a.mu held.
func (a *agent) promptIfIdle() {
	if a.pending == 0 {
		a.write(ReadyMarker)
	}
}
