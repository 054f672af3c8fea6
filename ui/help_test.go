package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"
)

// Help shows every key with its whole description at 80x24: nothing is
// cut with an ellipsis and no "more keys" note is needed.
func TestHelpWrapsAt80x24(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {100, 30}, {120, 40}} {
		b := setup(t, everyState).size(sz[0], sz[1]).press("?")
		s := ansi.Strip(b.view())
		require.NotContains(t, s, "…", "a description is cut at %dx%d:\n%s", sz[0], sz[1], s)
		require.NotContains(t, s, "more keys than fit", "at %dx%d", sz[0], sz[1])
		flat := strings.Join(strings.Fields(s), " ")
		for _, g := range b.m.keys.helpGroups() {
			for _, k := range g.keys {
				require.Contains(t, flat, strings.Join(strings.Fields(k.Help().Desc), " "), "%q at %dx%d", k.Help().Key, sz[0], sz[1])
			}
		}
	}
}

// On a wide screen the help spreads over columns of about equal height
// instead of one long column beside 150 empty ones, and no key line runs
// into the next column without a gap.
func TestHelpSpreadsOverAWideScreen(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(200, 50).press("?")
	lines := strings.Split(ansi.Strip(b.view()), "\n")
	used := 0
	for i, l := range lines[1:] {
		if strings.TrimSpace(l) != "" {
			used = i + 1
		}
	}
	total := 0
	for _, g := range b.m.keys.helpGroups() {
		total += 2 + len(g.keys)
	}
	require.LessOrEqual(t, used, total/3+8, "the help fills %d rows of 50 at 200x50:\n%s", used, strings.Join(lines, "\n"))
	for _, h := range []string{"Navigate", "Panes", "Console"} {
		require.Contains(t, strings.Join(lines, "\n"), h)
	}
	for _, l := range lines {
		require.NotContains(t, l, "Diff Act", "a key line runs into the next column")
	}
}
