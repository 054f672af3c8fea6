package main

import (
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/require"
)

func TestConsoleColors(t *testing.T) {
	for _, tc := range []struct {
		setting string
		env     []string
		want    colorprofile.Profile
		forced  bool
	}{
		{"auto", []string{"TERM=tmux-256color", "COLORTERM=truecolor"}, colorprofile.TrueColor, true},
		{"auto", []string{"TERM=screen", "COLORTERM=24bit"}, colorprofile.TrueColor, true},
		{"auto", []string{"COLORTERM=truecolor", "NO_COLOR=1"}, 0, false},
		{"auto", []string{"TERM=xterm-256color"}, 0, false},
		{"truecolor", nil, colorprofile.TrueColor, true},
		{"256", []string{"COLORTERM=truecolor"}, colorprofile.ANSI256, true},
		{"16", nil, colorprofile.ANSI, true},
	} {
		got, forced := consoleColors(tc.setting, tc.env)
		require.Equal(t, tc.forced, forced, "%s %v", tc.setting, tc.env)
		if forced {
			require.Equal(t, tc.want, got, "%s %v", tc.setting, tc.env)
		}
	}
}
