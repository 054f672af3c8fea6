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

func TestRowsDeltaFindsAScrollAndOnlyWhenItSendsFewerRows(t *testing.T) {
	t.Parallel()
	prev := []string{"a", "b", "c", "d", "e"}
	apply := func(prev []string, shift int, changed []int, next []string) []string {
		out := append([]string(nil), prev...)
		ShiftRows(out, shift)
		for _, i := range changed {
			out[i] = next[i]
		}
		return out
	}
	for _, tc := range []struct {
		next    []string
		shift   int
		changed []int
	}{
		{[]string{"a", "b", "c", "d", "e"}, 0, nil},
		{[]string{"a", "b", "c", "d", "E"}, 0, []int{4}},
		{[]string{"b", "c", "d", "e", "f"}, 1, []int{4}},
		{[]string{"d", "e", "x", "y", "z"}, 3, []int{2, 3, 4}},
		// A shift that saves nothing is not taken.
		{[]string{"b", "x", "y", "z", "e"}, 0, []int{0, 1, 2, 3}},
		{[]string{"b", "x", "y", "z", "w"}, 1, []int{1, 2, 3, 4}},
		{[]string{"v", "w", "x", "y", "z"}, 0, []int{0, 1, 2, 3, 4}},
	} {
		shift, changed := RowsDelta(prev, tc.next)
		require.Equal(t, tc.shift, shift, "%v", tc.next)
		require.Equal(t, tc.changed, changed, "%v", tc.next)
		require.Equal(t, tc.next, apply(prev, shift, changed, tc.next))
	}
}
