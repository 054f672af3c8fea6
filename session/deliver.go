package session

import (
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Bracketed paste markers (xterm mode 2004).
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
	ctrlD      = "\x04"
)

// Write sends raw bytes to the program, as typed in focus mode. Every byte
// is recorded as an "i" event when it reaches the pty.
func (s *Session) Write(b []byte) error {
	return s.send(append([]byte(nil), b...), true)
}

// Paste sends text as one paste: wrapped in bracketed-paste markers if the
// program enabled mode 2004, raw otherwise. Escape sequences and control
// characters but line breaks and tabs are removed from text (an end marker
// among them), so pasted text can never end the paste early or be read as
// keys.
func (s *Session) Paste(text string) error {
	if !s.spec.Types() {
		return s.errNeverTyped()
	}
	return s.send(pasteBytes(text, s.term.BracketedPaste()), true)
}

// Notice shows line in the pane without sending anything to the program:
// it reaches the emulator and the recording as output, on a line of its
// own. A file-delivery harness (a shell) learns of its brief this way,
// because anything typed into a shell is run.
func (s *Session) Notice(line string) error {
	b := []byte("\r\n" + shownOnly(line) + "\r\n")
	// Through the parse queue like the program's own output, so the two
	// stay in order on the screen and in the recording.
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.ptyClosed {
		return fmt.Errorf("harness %q has exited; notice not shown", s.spec.Name)
	}
	s.cast.event("o", b)
	s.parse.push(b)
	return nil
}

// shownOnly makes a line safe to show in a pane: control characters
// become spaces, so the line is shown, never interpreted.
func shownOnly(line string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, line)
}

// errNeverTyped refuses text for a harness that takes nothing typed.
func (s *Session) errNeverTyped() error {
	return fmt.Errorf("harness %q takes its brief as the file %s; text is never typed into it", s.spec.Name, task.BriefPath)
}

// Submit sends the harness's submit sequence.
func (s *Session) Submit() error { return s.send(append([]byte(nil), s.submit...), true) }

// Deliver hands text to the program the harness's way. "type" pastes then
// submits; "stdin" also sends ctrl-d; "arg" took its brief at launch, so a
// later delivery (a correction) can only be typed, like "type".
func (s *Session) Deliver(text string) error {
	if !s.spec.Types() {
		return s.errNeverTyped()
	}
	b := pasteBytes(text, s.term.BracketedPaste())
	b = append(b, s.submit...)
	if s.spec.Delivery == DeliveryStdin {
		b = append(b, ctrlD...)
	}
	if err := s.send(b, true); err != nil {
		return fmt.Errorf("deliver to harness %q: %w", s.spec.Name, err)
	}
	return nil
}

// Resubmit nudges a stuck pane the harness's way: "submit" re-sends the
// submit sequence, "brief" re-delivers brief, and "last-input" re-sends the
// last input if the screen has not changed since it was sent (otherwise it
// falls back to the submit sequence).
func (s *Session) Resubmit(brief string) error {
	if !s.spec.Types() {
		return s.errNeverTyped()
	}
	switch s.spec.Resubmit {
	case ResubmitBrief:
		return s.Deliver(brief)
	case ResubmitLastInput:
		s.inMu.Lock()
		last, ver := s.lastInput, s.lastInputVer
		s.inMu.Unlock()
		if last != nil && ver == s.term.Version() {
			return s.send(append([]byte(nil), last...), false)
		}
	}
	return s.Submit()
}

// send queues b for the program. user marks operator or engine input (as
// opposed to a resend), which Resubmit's "last-input" mode remembers.
func (s *Session) send(b []byte, user bool) error {
	select {
	case <-s.done:
		return fmt.Errorf("harness %q has exited (code %d)", s.spec.Name, s.exitCode)
	default:
	}
	if user {
		s.inMu.Lock()
		s.lastInput, s.lastInputVer = b, s.term.Version()
		s.inMu.Unlock()
		s.own.active(s.now()) // input gives the CLI work of its own (see OwnGrace)
	}
	if !s.in.push(b) {
		return fmt.Errorf("harness %q is exiting; input not sent", s.spec.Name)
	}
	return nil
}

// pasteBytes returns text as paste input, bracketed if asked. Text typed
// as a paste (a brief, a correction, a refusal) came from outside: its
// escape sequences and control characters (an ESC[201~ that would end the
// paste early, a ^C, a ^D, a lone \r that submits) are removed first, so
// none of it is read as keys.
func pasteBytes(text string, bracketed bool) []byte {
	text = task.PlainText(text)
	if !bracketed {
		return []byte(text)
	}
	return []byte(pasteStart + text + pasteEnd)
}
