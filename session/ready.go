package session

import (
	"context"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Fingerprint returns the screen's plain text with the harness's volatile
// regions (spinners, clocks) blanked, so two screens that differ only
// there compare equal.
func (s *Session) Fingerprint() string { return s.fingerprint(s.term.Text()) }

// fingerprint blanks the volatile regions of text.
func (s *Session) fingerprint(text string) string {
	for _, re := range s.volatile {
		text = re.ReplaceAllString(text, "")
	}
	return text
}

// WaitReady confirms the launch: it returns nil once the ready marker
// matches the screen and the screen (less its volatile regions) then stays
// unchanged for the harness's quiet period; at once when the harness has no
// ready marker. It returns a *task.Refusal with
// ReasonLaunchNotConfirmed if the launch timeout passes first, with
// ReasonSessionExited if the program exits, and ctx's error if ctx ends.
//
// It never polls: it wakes on the reader's change signal, on the quiet
// timer and on the deadline.
func (s *Session) WaitReady(ctx context.Context) error {
	if s.ready == nil {
		return nil // no ready marker: the launch is confirmed once the program runs
	}
	timeout := s.spec.LaunchLimit()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	var (
		matched  bool
		settled  string // fingerprint when the quiet period last restarted
		inDialog bool   // a dialog shows: the deadline stands still
	)
	for {
		changed := s.changeSignal() // before reading, so no change is missed
		text := s.term.Text()
		fp := s.fingerprint(text)
		ready := s.ready.MatchString(text)
		// A dialog waits for the operator, who may take minutes: the
		// launch's clock runs again, whole, once it is answered.
		if _, _, dialog := s.spec.DialogOn(text); dialog {
			if !inDialog {
				inDialog = true
				deadline.Stop()
			}
		} else if inDialog {
			inDialog = false
			deadline.Reset(timeout)
		}
		switch {
		case !ready:
			if matched {
				matched = false
				quiet.Stop()
			}
		case !matched || fp != settled:
			matched, settled = true, fp
			quiet.Reset(s.spec.quiet())
		}
		select {
		case <-changed:
		case <-quiet.C:
			if matched && s.Fingerprint() == settled {
				// The CLI at its prompt, before any work was asked of
				// it: its processes are its own (see ownProcs).
				s.markOwn()
				return nil
			}
		case <-s.done:
			return task.Refuse(task.ReasonSessionExited,
				"Harness %q exited with code %d before its ready prompt settled.", s.spec.Name, s.exitCode)
		case <-deadline.C:
			detail := "its ready marker %q never appeared within %s."
			if matched {
				detail = "its ready marker %q appeared but the screen kept changing for %s."
			}
			return task.Refuse(task.ReasonLaunchNotConfirmed, "Harness %q: "+detail+"%s", s.spec.Name, s.spec.Ready, timeout, screenQuote(s.term.Text()))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// quoteLines bounds the screen a launch-not-confirmed refusal quotes.
const quoteLines = 15

// screenQuote returns " The screen showed:" and the last non-blank lines
// of text, indented, so the refusal says what the agent showed instead of
// its prompt; "" for a blank screen.
func screenQuote(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " ")
		if strings.TrimSpace(l) != "" {
			lines = append(lines, "  "+l)
		}
	}
	if len(lines) == 0 {
		return " The screen was blank."
	}
	if len(lines) > quoteLines {
		lines = lines[len(lines)-quoteLines:]
	}
	return " The screen showed:\n" + strings.Join(lines, "\n")
}
