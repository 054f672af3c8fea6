package session

import (
	"context"
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
		matched bool
		settled string // fingerprint when the quiet period last restarted
	)
	for {
		changed := s.changeSignal() // before reading, so no change is missed
		text := s.term.Text()
		fp := s.fingerprint(text)
		switch {
		case !s.ready.MatchString(text):
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
			return task.Refuse(task.ReasonLaunchNotConfirmed, "Harness %q: "+detail, s.spec.Name, s.spec.Ready, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
