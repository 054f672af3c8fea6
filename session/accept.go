package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Delivery is confirmed, not assumed, for a harness that names a pending
// pattern: a regular expression matching its screen while typed input
// waits at the prompt unsubmitted (Claude Code's paste placeholder, "[Pasted
// text #1 +81 lines]"). After the submit key the session watches the
// screen until the input was visibly taken: the input was seen waiting
// (the pending pattern matched) and then the screen (volatile regions
// masked) changed and the pattern stopped matching, both still holding a
// moment later; or, for an input never seen waiting, the screen changed
// and nothing is pending when the acceptance window ends. If neither,
// the submit key is sent again, up to the harness's submit_retries times;
// then the input is refused with what the screen shows.
//
// An agent at work may take input into a queue of its own and send it when
// its tool call or turn ends; its prompt then shows that state (Claude
// Code's box reads "Press up to edit queued messages"), which the harness's
// queued pattern names: input it shows queued was taken, so it is neither
// re-submitted nor reported undelivered.
//
// Without a pending pattern nothing tells an input waiting at the prompt
// from one an agent read silently (many queue input while they work), so
// the input counts as taken once written; `harness check` shows whether a
// program echoes what is typed, to help write the pattern.
//
// Claude Code 2.1.197 is the case in point: it ignores a submit key that
// arrives with, or right after, a long paste (the paste is still being
// collapsed into its placeholder), and takes the same key a moment later.

// Defaults for delivery confirmation.
const (
	defaultSubmitRetries = 3
	minAcceptWindow      = time.Second
	maxAcceptWindow      = 5 * time.Second
	maxAcceptSettle      = 250 * time.Millisecond
)

// DeliverChecked delivers text the harness's way (Deliver) and confirms the
// program took it. A "stdin" harness is not checked: its end-of-file ends
// the input whatever the screen shows.
func (s *Session) DeliverChecked(ctx context.Context, text string) error {
	before := s.Fingerprint()
	if err := s.Deliver(text); err != nil {
		return err
	}
	if s.spec.Delivery == DeliveryStdin {
		return nil
	}
	return s.confirmTaken(ctx, before)
}

// SendChecked pastes text, submits it and confirms the program took it: a
// correction or a refusal typed into a working agent.
func (s *Session) SendChecked(ctx context.Context, text string) error {
	before := s.Fingerprint()
	if err := s.Paste(text); err != nil {
		return err
	}
	if err := s.Submit(); err != nil {
		return err
	}
	return s.confirmTaken(ctx, before)
}

// SubmitChecked sends the submit key and confirms the program took what
// was waiting at its prompt.
func (s *Session) SubmitChecked(ctx context.Context) error {
	before := s.Fingerprint()
	if err := s.Submit(); err != nil {
		return err
	}
	return s.confirmTaken(ctx, before)
}

// confirmTaken waits for the program to take the input submitted when the
// screen's fingerprint was before, re-sending the submit key after each
// window that passes without it.
func (s *Session) confirmTaken(ctx context.Context, before string) error {
	if s.pending == nil {
		return nil
	}
	retries := s.spec.submitRetries()
	window := s.spec.acceptWindow()
	start := time.Now()
	for try := 0; ; try++ {
		taken, err := s.waitTaken(ctx, before, window)
		if err != nil || taken {
			return err
		}
		if try == retries {
			break
		}
		before = s.Fingerprint()
		if err := s.Submit(); err != nil {
			return err
		}
	}
	return task.Refuse(task.ReasonInputNotAccepted,
		"Harness %q: the submit key was sent %d times over %s and the screen still shows the input waiting: %s",
		s.spec.Name, retries+1, time.Since(start).Round(100*time.Millisecond), ScreenTail(s.term.Text(), 3))
}

// waitTaken reports whether the program took the input within window. It
// wakes on screen changes and timers only.
//
// An agent at work changes its screen on its own, and under load it may
// draw the input at its prompt only a while after it arrived: a changed
// screen with nothing pending is the input taken only once the input was
// seen waiting (then gone), or when the whole window passed without it
// ever showing (a short input taken at once). Otherwise a screen redrawn
// by the agent's work before the input showed would count as the input
// taken, and an input whose submit key was lost would sit at the prompt.
func (s *Session) waitTaken(ctx context.Context, before string, window time.Duration) (bool, error) {
	deadline := time.NewTimer(window)
	defer deadline.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	holding, seen := false, false
	for {
		changed := s.changeSignal() // before reading, so no change is missed
		text := s.term.Text()
		pending := s.waiting(text)
		seen = seen || pending
		taken := seen && !pending && s.fingerprint(text) != before
		switch {
		case taken && !holding:
			holding = true
			settle.Reset(min(window/4, maxAcceptSettle))
		case !taken && holding:
			holding = false
			settle.Stop()
		}
		select {
		case <-changed:
		case <-settle.C:
			if s.taken(before) {
				return true, nil
			}
			holding = false
		case <-deadline.C:
			return s.taken(before), nil
		case <-s.done:
			return false, fmt.Errorf("harness %q exited (code %d) before it took the input", s.spec.Name, s.exitCode)
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// taken reports whether the screen shows the input taken: changed since
// before, and nothing pending at the prompt.
func (s *Session) taken(before string) bool {
	text := s.term.Text()
	return !s.waiting(text) && s.fingerprint(text) != before
}

// waiting reports whether text shows input waiting unsent at the prompt:
// the pending pattern matches, and the queued pattern (input the program
// holds to send itself, once its turn ends) does not.
func (s *Session) waiting(text string) bool {
	return s.pending.MatchString(text) && (s.queued == nil || !s.queued.MatchString(text))
}

// ScreenTail returns the last n non-blank lines of a screen, trimmed and
// quoted, for messages that say what a pane shows.
func ScreenTail(text string, n int) string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && strings.Trim(l, "─━-") != "" {
			out = append([]string{l}, out...)
		}
	}
	if len(out) == 0 {
		return "an empty screen"
	}
	return fmt.Sprintf("%q", strings.Join(out, " / "))
}

// submitRetries returns how many times a submit key is re-sent.
func (s Spec) submitRetries() int {
	if s.SubmitRetries > 0 {
		return s.SubmitRetries
	}
	return defaultSubmitRetries
}

// acceptWindow is how long a submitted input gets to show it was taken
// before the submit key is sent again: twice the quiet period, within
// bounds.
func (s Spec) acceptWindow() time.Duration {
	return min(max(2*s.quiet(), minAcceptWindow), maxAcceptWindow)
}
