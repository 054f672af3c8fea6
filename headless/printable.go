package headless

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Printable returns s made safe for the operator's terminal, on one line.
// Text from tasks, corrections and agents ends up in status and headless
// output; left raw, an escape sequence in a task title could clear the
// screen, retitle the window or write the clipboard (OSC 52). Escape
// sequences are removed whole, other control characters (C0, DEL and C1,
// which some terminals obey as 8-bit escapes) are dropped, invalid UTF-8 is
// replaced, tabs become spaces and line breaks a visible ⏎.
func Printable(s string) string {
	if plain(s) {
		return s // nothing to remove: the common case, so `status` on thousands of tasks copies nothing
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
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
	s = ansi.Strip(s)
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range s {
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

// plain reports whether s is valid UTF-8 with no control character (C0,
// DEL or C1) in it, so Printable would return it unchanged: without ESC or
// a C1 introducer there is no escape sequence to strip.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x20 || b == 0x7f {
			return false
		}
		if b >= 0x80 {
			return plainUTF8(s[i:])
		}
	}
	return true
}

// plainUTF8 is plain's rune-by-rune check, for text past its first
// non-ASCII byte.
func plainUTF8(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 || r == 0x7f || isC1(r) {
			return false
		}
	}
	return true
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }
