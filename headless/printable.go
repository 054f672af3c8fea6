package headless

import (
	"strings"
	"unicode"

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

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }
