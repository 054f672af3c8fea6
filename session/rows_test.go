package session

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The text a view that holds rows gives is the emulator's own text.
func TestRowsTextIsTheEmulatorsText(t *testing.T) {
	t.Parallel()
	for _, screen := range []string{
		"",
		"plain\r\n  indented  \r\n\ttab",
		"\x1b[31;1mred bold\x1b[m then \x1b[38;2;1;2;3mtruecolor\x1b[m",
		"wide 変更 and emoji 👍 and e\u0301 combined",
		"\x1b[44m          \x1b[m background only",
		"0123456789012345678901234567890123456789wrapped at the margin",
		"\x1b[?1049halternate\x1b[5;10Hmoved",
	} {
		term := NewTerminal(40, 6, 0, nil)
		_, _ = term.Write([]byte(screen))
		require.Equal(t, term.Text(), RowsText(term.AppendRows(nil, 0, 6, 40)), "screen %q", screen)
	}
}

func TestFitRowCutsAndPads(t *testing.T) {
	t.Parallel()
	require.Equal(t, "ab  ", FitRow("ab", 4))
	require.Equal(t, "\x1b[31mab\x1b[m", FitRow("\x1b[31mabcd", 2))
	require.Equal(t, "", FitRow("abc", 0))
}
