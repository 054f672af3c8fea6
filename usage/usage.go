// Package usage accounts for what agent sessions spent, from what the
// agents themselves report: the token counts and the model id in the usage
// records of each reply, never an estimate. Cost comes from the price table
// in orchestra.toml, per model and per token column.
//
// Two sources are read:
//
//   - a Claude Code transcript (one JSON-lines file per conversation under
//     the CLI's config directory, projects/<encoded working dir>/), followed
//     as it grows by Follow;
//   - the result object of `claude -p --output-format json`, by ParsePrintResult.
package usage

import (
	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Tokens are token counts in the API's four columns.
type Tokens = task.Tokens

// Record is one reply's usage as the agent recorded it.
type Record = task.UsageRecord

// ModelTotals are one model's tokens and cost.
type ModelTotals = task.ModelTotals

// Totals sum records per model.
type Totals = task.UsageTotals

// Cost returns the price of tk in US dollars; prices are per million tokens.
func Cost(p config.Price, tk Tokens) float64 { return task.Cost(p, tk) }
