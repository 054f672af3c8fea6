package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: any orchestra.toml either is refused with an error naming the
// file, or yields a config that passes its own validation, every number in
// range. CI runs it for a while (.ci/fuzz.sh); seeds are below and in
// testdata/fuzz.
func FuzzParse(f *testing.F) {
	f.Add("")
	f.Add("[pane]\ncols = 100\nrows = 30\n")
	f.Add("[pane]\ncols = 100000\nrows = 100000\n")
	f.Add("[lease]\nlength = \"20m\"\nwindow = \"5m\"\nmax_attempts = 3\n")
	f.Add("[harness.x]\nargv = [\"/bin/sh\"]\nready = \"[$#] ?$\"\n[[slots]]\nharness = \"x\"\ncapacity = 2\n")
	f.Add("[prices.m]\ninput = 3.0\noutput = 15.0\n[limits]\ncorrection_bytes = 100\n")
	f.Add("[brief]\nbudget = 300\n[stuck]\nafter = \"1m\"\nauto_resubmit = 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := Parse("orchestra.toml", text)
		if err != nil {
			require.Contains(t, err.Error(), "orchestra.toml")
			return
		}
		require.NoError(t, cfg.Validate("again"), "an accepted config must validate")
		require.LessOrEqual(t, cfg.Pane.Cols, maxPaneCols)
		require.LessOrEqual(t, cfg.Pane.Rows, maxPaneRows)
		require.Positive(t, cfg.Limits.CorrectionBytes)
	})
}
