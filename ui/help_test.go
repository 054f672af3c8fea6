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
