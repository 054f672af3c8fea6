package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// status --json carries each task's spend from the store's sums, marked
// as a lower bound, with the reason, where a session's usage event was (the
// interactive Codex's titles), whatever the task's harness is now: here a
// task handed off to `codex-exec`, whose one-shot sessions record every
// request, after a Codex session of its phase made side requests. A fresh
// process reads it from the store alone, as an engine restarted would.
func TestStatusJSONCarriesUsageAndItsLowerBound(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	add := func(title, harness string) task.ID {
		code, stdout, stderr := cli(t, "add", "-C", root, "--title", title, "--goal", "g", "--verify", "true", "--harness", harness)
		require.Equal(t, 0, code, stderr)
		return task.ID(strings.TrimSpace(stdout))
	}
	handed, complete := add("spent", "codex-exec"), add("complete", "codex-exec")
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	ctx := context.Background()
	const why = "Codex's interactive sessions ask for titles in requests its rollout files do not record."
	for _, c := range []struct {
		id    task.ID
		lower []string
	}{{handed, []string{why, ""}}, {complete, []string{"", ""}}} {
		tk, err := st.TaskGet(ctx, c.id)
		require.NoError(t, err)
		next := tk
		next.UpdatedAt = time.Now()
		var evs []task.Event
		for i, lower := range c.lower {
			d := coord.UsageData{SessionID: fmt.Sprintf("S%d", i), Phase: task.PhaseImplement, LowerBound: lower,
				Totals: task.UsageTotals{Models: map[string]task.ModelTotals{
					"gpt-stub": {Tokens: task.Tokens{Input: 2500, Output: 50}, CostUSD: 0.0275, Priced: true}}}}
			data, _ := json.Marshal(d)
			evs = append(evs, task.Event{ID: task.NewULID(time.Now()), TaskID: c.id, SessionID: d.SessionID, Kind: task.EvUsage,
				Text: "used", Data: data, At: time.Now()})
		}
		require.NoError(t, st.TaskUpdate(ctx, store.TaskUpdateParams{Task: next, ExpectState: tk.State, Events: evs}))
	}
	require.NoError(t, st.Close())

	code, stdout, stderr := cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct {
		ID    task.ID
		Usage *statusUsage
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.NotNil(t, r.Usage, stdout)
		require.Equal(t, task.Tokens{Input: 5000, Output: 100}, r.Usage.Tokens)
		require.InDelta(t, 0.055, r.Usage.CostUSD, 1e-9)
		if r.ID == handed {
			require.Equal(t, why, r.Usage.LowerBound, stdout)
		} else {
			require.Empty(t, r.Usage.LowerBound, "no session of it was marked: %s", stdout)
		}
	}
}
