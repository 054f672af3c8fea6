package lease

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestScreenFingerprintMasksVolatileParts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"spinner glyph and elapsed counter", spinnerScreen("⠋", "(3s"), spinnerScreen("⠴", "(1m 12s"), true},
		{"fractional seconds", "built in 12.3s", "built in 9.87s", true},
		{"milliseconds", "ok  calc 120ms", "ok  calc 3ms", true},
		{"clock time", "last run 09:14:02", "last run 10:01:59", true},
		{"token counter", "↑ 1.2k tokens", "↑ 3.4k tokens", true},
		{"ascii spinner at line start", "| working\nfoo", "/ working\nfoo", true},
		{"trailing spaces and blank lines", "a  \nb\n\n\n", "a\nb", true},
		{"real text change", "● Read calc.go", "● Read calc_test.go", false},
		{"ascii bar in the middle of a line counts", "a | b", "a / b", false},
		{"a new line counts", "● Read calc.go", "● Read calc.go\n● Update(calc.go)", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fa, fb := ScreenFingerprint(tc.a, nil), ScreenFingerprint(tc.b, nil)
			require.Len(t, fa, 64)
			if tc.same {
				require.Equal(t, fa, fb)
			} else {
				require.NotEqual(t, fa, fb)
			}
		})
	}
}

func TestScreenFingerprintExtraVolatilePatterns(t *testing.T) {
	t.Parallel()
	a, b := "cost: $0.0123", "cost: $0.0456"
	require.NotEqual(t, ScreenFingerprint(a, nil), ScreenFingerprint(b, nil))
	extra, err := CompileVolatile([]string{`\$\d+\.\d+`})
	require.NoError(t, err)
	require.Equal(t, ScreenFingerprint(a, extra), ScreenFingerprint(b, extra))
}

func TestCompileVolatileNamesTheBadPattern(t *testing.T) {
	t.Parallel()
	_, err := CompileVolatile([]string{`ok`, `(unclosed`})
	require.ErrorContains(t, err, `volatile pattern 2 ("(unclosed")`)
	res, err := CompileVolatile(nil)
	require.NoError(t, err)
	require.Empty(t, res)
	var _ []*regexp.Regexp = res
}

func TestWorktreeFingerprint(t *testing.T) {
	t.Parallel()
	mt := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	a := WorktreeEntry("calc.go", 120, mt)
	b := WorktreeEntry("calc_test.go", 300, mt)
	require.Equal(t, WorktreeFingerprint([]string{a, b}), WorktreeFingerprint([]string{b, a}), "order does not matter")
	require.NotEqual(t, WorktreeFingerprint([]string{a, b}), WorktreeFingerprint([]string{a}))
	touched := WorktreeEntry("calc.go", 120, mt.Add(time.Second))
	require.NotEqual(t, WorktreeFingerprint([]string{a}), WorktreeFingerprint([]string{touched}), "a rewrite counts")
	require.Equal(t, WorktreeFingerprint(nil), WorktreeFingerprint([]string{}))
	in := []string{b, a}
	WorktreeFingerprint(in)
	require.Equal(t, []string{b, a}, in, "the input is not reordered")
}
