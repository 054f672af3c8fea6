package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An unknown subcommand is one line and the nearest commands, as git and
// cobra answer, not the whole usage.
func TestUnknownCommandSuggestsTheNearestOne(t *testing.T) {
	t.Parallel()
	for typed, want := range map[string][]string{
		"stauts":  {"status"},
		"statsu":  {"status"},
		"aprove":  {"approve"},
		"cancle":  {"cancel"},
		"harnes":  {"harness"},
		"eng":     {"engine", "engines"},
		"engnie":  {"engine", "engines"},
		"xyzzyqq": nil,
	} {
		code, stdout, stderr := cli(t, typed)
		require.Equal(t, 2, code, typed)
		require.Empty(t, stdout, typed)
		require.NotContains(t, stderr, "Usage:", "%s: not the whole usage", typed)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		require.Equal(t, `orchestra-tui: unknown command "`+typed+`" (orchestra-tui --help lists them)`, lines[0])
		if want == nil {
			require.Len(t, lines, 1, stderr)
			continue
		}
		require.Equal(t, "Did you mean this?", lines[2], stderr)
		var got []string
		for _, l := range lines[3:] {
			got = append(got, strings.TrimPrefix(l, "\t"))
		}
		require.Equal(t, want, got, typed)
	}
}
