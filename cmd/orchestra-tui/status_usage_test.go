package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// status --json carries each task's spend from the store's sums, and marks
// it as a lower bound, with the reason, for a harness whose CLI makes
// requests it records nowhere (the interactive Codex's titles).
func TestStatusJSONCarriesUsageAndItsLowerBound(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "spent", "--goal", "g", "--verify", "true", "--harness", "codex")
	require.Equal(t, 0, code, stderr)
	id := task.ID(strings.TrimSpace(stdout))
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	ctx := context.Background()
	tk, err := st.TaskGet(ctx, id)
	require.NoError(t, err)
	next := tk
	next.UpdatedAt = time.Now()
	d := coord.UsageData{SessionID: "S1", Phase: task.PhaseImplement, Totals: task.UsageTotals{Models: map[string]task.ModelTotals{
		"gpt-stub": {Tokens: task.Tokens{Input: 5000, Output: 100}, CostUSD: 0.055, Priced: true}}}}
	data, _ := json.Marshal(d)
	require.NoError(t, st.TaskUpdate(ctx, store.TaskUpdateParams{Task: next, ExpectState: tk.State, Events: []task.Event{
		{ID: task.NewULID(time.Now()), TaskID: id, SessionID: "S1", Kind: task.EvUsage, Text: "used", Data: data, At: time.Now()}}}))
	require.NoError(t, st.Close())

	code, stdout, stderr = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct {
		ID    string
		Usage *statusUsage
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.Len(t, rows, 1)
	require.NotNil(t, rows[0].Usage, stdout)
	require.Equal(t, task.Tokens{Input: 5000, Output: 100}, rows[0].Usage.Tokens)
	require.InDelta(t, 0.055, rows[0].Usage.CostUSD, 1e-9)
	require.Contains(t, rows[0].Usage.LowerBound, "Codex", stdout)
}
