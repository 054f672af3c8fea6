package usage

import (
	"encoding/json"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/config"
)

// PrintResult is what `claude -p --output-format json` (or the final
// "result" line of stream-json) reports about a run's spending.
type PrintResult struct {
	// SessionID is the CLI's conversation id.
	SessionID string
	// Totals are the tokens per model from modelUsage, priced from the
	// table. modelUsage is keyed by the model the CLI asked for, which is
	// the best a print-mode result says; a transcript names the model that
	// answered.
	Totals Totals
	// ReportedCostUSD is the CLI's own total_cost_usd: its estimate at the
	// list prices of the model it believes it used, kept for comparison.
	ReportedCostUSD float64
}

type printJSON struct {
	Type         string  `json:"type"`
	SessionID    string  `json:"session_id"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	ModelUsage   map[string]struct {
		InputTokens              int64 `json:"inputTokens"`
		OutputTokens             int64 `json:"outputTokens"`
		CacheReadInputTokens     int64 `json:"cacheReadInputTokens"`
		CacheCreationInputTokens int64 `json:"cacheCreationInputTokens"`
	} `json:"modelUsage"`
}

// ParsePrintResult reads a print-mode result object.
func ParsePrintResult(data []byte, prices map[string]config.Price) (PrintResult, error) {
	var p printJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return PrintResult{}, fmt.Errorf("read claude -p result: %w", err)
	}
	if p.Type != "result" {
		return PrintResult{}, fmt.Errorf("read claude -p result: type %q is not \"result\"", p.Type)
	}
	res := PrintResult{SessionID: p.SessionID, ReportedCostUSD: p.TotalCostUSD}
	for model, m := range p.ModelUsage {
		if m.InputTokens < 0 || m.OutputTokens < 0 || m.CacheReadInputTokens < 0 || m.CacheCreationInputTokens < 0 {
			return PrintResult{}, fmt.Errorf("read claude -p result: model %q has a negative token count", model)
		}
		res.Totals.Add(Record{Model: model, Tokens: Tokens{
			Input: m.InputTokens, Output: m.OutputTokens,
			CacheCreation: m.CacheCreationInputTokens, CacheRead: m.CacheReadInputTokens,
		}}, prices)
	}
	return res, nil
}
