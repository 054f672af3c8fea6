package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every number has a range: a 100000-column pane (which ran the console out
// of memory at its first launch) is refused with the key, the value and the
// range named, and so is a zero correction limit or a negative price.
func TestEveryNumberHasARange(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"[pane]\ncols = 100000\nrows = 100000\n":              "pane.cols = 100000 is out of range (20 to 1000)",
		"[pane]\ncols = 100\nrows = 100000\n":                 "pane.rows = 100000 is out of range (5 to 500)",
		"[lease]\nmax_attempts = 1000000\n":                   "lease.max_attempts = 1000000 is out of range",
		"[lease]\ntick = \"1ns\"\n":                           "lease.tick = 1ns is out of range",
		"[limits]\ncorrection_bytes = 0\n":                    "limits.correction_bytes = 0 is out of range",
		"[limits]\nrecording_bytes = -1\n":                    "limits.recording_bytes = -1 is out of range",
		"[brief]\nbudget = 10\n":                              "brief.budget = 10 is out of range",
		"[prices.m]\ninput = -1.0\n":                          "prices.m.input = -1 is out of range",
		"[stuck]\nauto_resubmit = -3\n":                       "stuck.auto_resubmit = -3 is out of range",
		"[[slots]]\nharness = \"shell\"\ncapacity = 100000\n": "slots[0].capacity = 100000 is out of range",
		"[harness.shell]\nlaunch_timeout = \"9000h\"\n":       "harness.shell.launch_timeout = 9000h0m0s is out of range",
	} {
		_, err := Parse("orchestra.toml", text)
		require.ErrorContains(t, err, want, text)
		require.ErrorContains(t, err, "orchestra.toml: ", text)
	}
	cfg, err := Parse("orchestra.toml", "[pane]\ncols = 1000\nrows = 500\n")
	require.NoError(t, err)
	require.Equal(t, 16<<10, cfg.Limits.CorrectionBytes)
	require.NoError(t, Default().Validate("default"))
}

// A budget is an amount in US dollars with a range; another currency, a
// word or a negative amount is refused with the key named.
func TestBudgetIsAnAmountInUSD(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("orchestra.toml", "[budget]\ntask = \"0.05 USD\"\nday = \"$50\"\n")
	require.NoError(t, err)
	require.InDelta(t, 0.05, cfg.Budget.Task.USD(), 1e-12)
	require.InDelta(t, 50, cfg.Budget.Day.USD(), 1e-12)
	for text, want := range map[string]string{
		"[budget]\ntask = \"5 EUR\"\n":  "the amount must be in USD",
		"[budget]\nday = \"lots\"\n":    "is not an amount",
		"[budget]\ntask = \"-1 USD\"\n": "budget.task = \"-1 USD\" is out of range",
		"[budget]\nday = \"1e9 USD\"\n": "budget.day = \"1000000000 USD\" is out of range",
	} {
		_, err := Parse("orchestra.toml", text)
		require.ErrorContains(t, err, want, text)
	}
	// The built-in prices are there and a table replaces one model's.
	cfg, err = Parse("orchestra.toml", "[prices.\"gpt-stub\"]\ninput = 1.0\n")
	require.NoError(t, err)
	require.Equal(t, Price{Input: 1}, cfg.Prices["gpt-stub"])
	require.Equal(t, DefaultPrices()["claude-sonnet-4-5"], cfg.Prices["claude-sonnet-4-5"])
}
