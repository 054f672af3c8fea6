package modelstub

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// printResult is the part of `claude -p --output-format json` output that
// usage accounting reads. Observed with Claude Code 2.1.332 against the
// stub, the result object carries:
//
//   - type "result", subtype "success", is_error, result (the final text),
//     stop_reason, terminal_reason "completed", num_turns (one per model
//     request of the main loop), session_id, duration_ms, duration_api_ms;
//   - usage: input_tokens, output_tokens, cache_creation_input_tokens,
//     cache_read_input_tokens summed over the main loop's requests, plus
//     output_tokens_details, server_tool_use, service_tier, cache_creation
//     {ephemeral_1h_input_tokens, ephemeral_5m_input_tokens}, speed;
//   - modelUsage: keyed by the model name the CLI requested (its default,
//     e.g. claude-opus-5-5, or the --model argument, passed through as is);
//     the model name in the server's reply does not change the key. Each with inputTokens, outputTokens,
//     cacheReadInputTokens, cacheCreationInputTokens, costUSD,
//     contextWindow, maxOutputTokens, canonicalModel, provider;
//   - total_cost_usd: the CLI's own price-list estimate (list prices of the
//     model it believes it talks to), not a figure from the server;
//   - permission_denials: tool calls the CLI refused (empty when
//     --allowedTools covers the script).
type printResult struct {
	Type          string  `json:"type"`
	Subtype       string  `json:"subtype"`
	IsError       bool    `json:"is_error"`
	Result        string  `json:"result"`
	NumTurns      int     `json:"num_turns"`
	TotalCostUSD  float64 `json:"total_cost_usd"`
	Usage         Usage   `json:"usage"`
	ModelUsage    map[string]modelUsage
	PermissionDen []any `json:"permission_denials"`
}

type modelUsage struct {
	InputTokens              int     `json:"inputTokens"`
	OutputTokens             int     `json:"outputTokens"`
	CacheReadInputTokens     int     `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int     `json:"cacheCreationInputTokens"`
	CostUSD                  float64 `json:"costUSD"`
}

// TestClaudePrintModePlan runs the real CLI in print mode on a plan brief:
// it must carry out the scripted Write calls, leave a valid artifact and
// the sentinel, and report the model and usage the stub sent.
func TestClaudePrintModePlan(t *testing.T) {
	t.Parallel()
	bin := claudecli.Require(t)
	const model = "claude-stub-model"
	perReply := Usage{InputTokens: 1000, OutputTokens: 20, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000}
	b := setup(t, PhaseScript(ScriptOptions{Usage: perReply}))

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	brief := renderBrief(task.PhasePlan)
	cmd := exec.CommandContext(ctx, bin, "-p", brief,
		"--model", model, "--allowedTools", "Bash", "Edit", "Write", "--output-format", "json")
	cmd.Dir = b.work
	cmd.Env = ClaudeEnv(b.home, b.base)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "claude -p: %s", stderr.String())

	_, err = task.ReadArtifact(b.work, task.PhasePlan)
	require.NoError(t, err)
	sentinel, err := os.ReadFile(filepath.Join(b.work, task.SentinelPath))
	require.NoError(t, err)
	require.Equal(t, "plan\n", string(sentinel))

	// Three main-loop requests: two Write turns and the closing text.
	var scripted []Exchange
	for _, e := range b.srv.Exchanges() {
		if e.Rule == "phase plan" {
			scripted = append(scripted, e)
		}
	}
	require.Len(t, scripted, 3)
	for _, e := range scripted[1:] {
		last, ok := e.Request.LastUser()
		require.True(t, ok)
		require.Len(t, last.ToolResults, 1)
		require.False(t, last.ToolResults[0].IsError, "tool result: %s", last.ToolResults[0].Content)
	}

	// The brief arrived whole, its sections in authority order.
	first, ok := FindBrief(scripted[0].Request)
	require.True(t, ok)
	requireAuthorityOrder(t, scripted[0].Request.Messages[first.Index].Text, task.PhasePlan)

	var res printResult
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	require.Equal(t, "success", res.Subtype)
	require.False(t, res.IsError)
	require.Equal(t, 3, res.NumTurns)
	require.Empty(t, res.PermissionDen)
	want := Usage{
		InputTokens:              3 * perReply.InputTokens,
		OutputTokens:             3 * perReply.OutputTokens,
		CacheCreationInputTokens: 3 * perReply.CacheCreationInputTokens,
		CacheReadInputTokens:     3 * perReply.CacheReadInputTokens,
	}
	require.Equal(t, want, res.Usage)
	require.Equal(t, model, scripted[0].Request.Model, "the CLI asks for the model --model names")
	require.Contains(t, res.ModelUsage, model, "modelUsage is keyed by the model the CLI requested")
	mu := res.ModelUsage[model]
	require.Equal(t, want, Usage{InputTokens: mu.InputTokens, OutputTokens: mu.OutputTokens,
		CacheCreationInputTokens: mu.CacheCreationInputTokens, CacheReadInputTokens: mu.CacheReadInputTokens})
	t.Logf("total_cost_usd=%v costUSD=%v (the CLI's estimate for an unknown model)", res.TotalCostUSD, mu.CostUSD)
}
