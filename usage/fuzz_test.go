package usage

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
)

// FuzzParseTranscriptLine: a Claude Code transcript line yields a record
// with a model and no negative count, or nothing; never a panic.
func FuzzParseTranscriptLine(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":5,"cache_creation_input_tokens":7,"cache_read_input_tokens":11}}}`))
	f.Add([]byte(`{"type":"user","message":{"content":"hi"}}`))
	f.Add([]byte(`{"type":"assistant","message":{"model":"<synthetic>","usage":{}}}`))
	f.Add([]byte(`{"type":"assistant","message":{"model":"m","usage":{"input_tokens":-5}}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, ok := ParseTranscriptLine(line)
		if !ok {
			require.Zero(t, r)
			return
		}
		require.NotEmpty(t, r.Model)
		requireNotNegative(t, r.Tokens)
	})
}

// FuzzParsePrintResult: a `claude -p --output-format json` result is read
// with no negative count and no negative cost, or refused.
func FuzzParsePrintResult(f *testing.F) {
	f.Add([]byte(`{"type":"result","session_id":"s","total_cost_usd":0.01,"modelUsage":{"claude-sonnet-4-5":{"inputTokens":3,"outputTokens":5,"cacheReadInputTokens":7,"cacheCreationInputTokens":11}}}`))
	f.Add([]byte(`{"type":"result","modelUsage":{"m":{"inputTokens":-3}}}`))
	f.Add([]byte(`{"type":"assistant"}`))
	f.Add([]byte(`[]`))
	prices := map[string]config.Price{"claude-sonnet-4-5": {Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParsePrintResult(data, prices)
		if err != nil {
			return
		}
		for _, m := range res.Totals.Models {
			requireNotNegative(t, m.Tokens)
			require.GreaterOrEqual(t, m.CostUSD, 0.0)
		}
	})
}

func requireNotNegative(t *testing.T, tk Tokens) {
	t.Helper()
	require.GreaterOrEqual(t, tk.Input, int64(0))
	require.GreaterOrEqual(t, tk.Output, int64(0))
	require.GreaterOrEqual(t, tk.CacheCreation, int64(0))
	require.GreaterOrEqual(t, tk.CacheRead, int64(0))
}
