package task

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Text from outside (a task's title and goal, a decision, a handoff file, an
// agent's screen) reaches two places that obey what is in it: the
// operator's terminal, when it is printed, and an agent's pty, when it is
// typed. Left raw, an escape sequence clears the operator's screen or
// writes their clipboard (OSC 52), and a control character typed inside a
// paste (^C, ^D, a lone \r, an ESC[201~ that ends the paste early) is read
// by the agent as a key. PlainText and PlainLine are the one sanitiser every
// such boundary uses.

// PlainText returns s with every escape sequence removed whole and every
// control character dropped except line breaks and tabs: the multi-line
// form, for text typed into a pane or written into a brief. A C1 control
// (which some terminals obey as an 8-bit escape) is removed with the
// sequence it introduces, invalid UTF-8 is replaced, and "\r\n" and a lone
// "\r" become "\n".
func PlainText(s string) string {
	if plain(s, true) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range stripped(s) {
		switch {
		case r == '\n', r == '\t':
			sb.WriteRune(r)
		case unicode.IsControl(r):
			// dropped: C0, DEL and C1 controls
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// PlainLine is PlainText on one line, for printing in a row of output:
// tabs become spaces and line breaks a visible ⏎.
func PlainLine(s string) string {
	if plain(s, false) {
		return s // nothing to remove: the common case, so `status` on thousands of tasks copies nothing
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range stripped(s) {
		switch {
		case r == '\n':
			sb.WriteString(" ⏎ ")
		case r == '\t':
			sb.WriteByte(' ')
		case unicode.IsControl(r):
			// dropped: C0, DEL and C1 controls
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// stripped is s as valid UTF-8, with its line breaks made "\n" and its
// escape sequences (7-bit or C1-introduced) removed whole.
func stripped(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	// A C1 control is its 7-bit escape in one character (U+009B is
	// ESC [): spelled out, the sequence it starts is stripped whole.
	if strings.ContainsFunc(s, isC1) {
		var sb strings.Builder
		for _, r := range s {
			if isC1(r) {
				sb.WriteByte(0x1b)
				sb.WriteByte(byte(r - 0x40))
				continue
			}
			sb.WriteRune(r)
		}
		s = sb.String()
	}
	return ansi.Strip(s)
}

// plain reports whether s is valid UTF-8 with no control character (C0,
// DEL or C1) in it, newlines and tabs aside when multiline, so the
// sanitiser would return it unchanged: without ESC or a C1 introducer there
// is no escape sequence to strip.
func plain(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if multiline && (b == '\n' || b == '\t') {
			continue
		}
		if b < 0x20 || b == 0x7f {
			return false
		}
		if b >= 0x80 {
			return plainUTF8(s[i:], multiline)
		}
	}
	return true
}

// plainUTF8 is plain's rune-by-rune check, for text past its first
// non-ASCII byte.
func plainUTF8(s string, multiline bool) bool {
	for _, r := range s {
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if r == utf8.RuneError || r < 0x20 || r == 0x7f || isC1(r) {
			return false
		}
	}
	return true
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }
