package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A store made before usage sums were kept gets them from its ledger when
// it is opened: what every earlier session.usage event said, summed, with
// data that is not a usage record left out, and the phases whose events
// were marked a lower bound marked.
func TestUsageTotalsFilledFromAnOlderLedger(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := open(path, 4)
	require.NoError(t, err)
	require.NoError(t, old.Close())
	db := rawDB(t, path)
	for _, data := range []any{
		`{"session_id":"s1","phase":"plan","totals":{"models":{"opus":{"tokens":{"input":100,"output":10,"cache_creation":1,"cache_read":5},"cost_usd":0.5,"priced":true}}}}`,
		`{"session_id":"s2","phase":"plan","totals":{"models":{"opus":{"tokens":{"input":20},"cost_usd":0.25,"priced":true},"haiku":{"tokens":{"input":3},"priced":false}}},"lower_bound":"side requests"}`,
		`{"session_id":"s3","phase":"implement","totals":{"models":{"opus":{"tokens":{"input":7},"cost_usd":0.125,"priced":true}}}}`,
		`not json`,
		`{"phase":"plan","totals":{"models":[1,2]}}`,
		nil,
	} {
		_, err := db.Exec(`INSERT INTO events (id, task_id, session_id, kind, reason, text, data, at)
VALUES (?, 'T1', 's', 'session.usage', '', 'used', ?, '2026-01-01T00:00:00.000000000Z')`, task.NewULID(time.Now()), data)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	st, err := Open(path)
	require.NoError(t, err)
	defer st.Close()
	all, err := st.UsageList(context.Background())
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, task.Phase("implement"), all[0].Phase)
	require.Equal(t, task.ModelTotals{Tokens: task.Tokens{Input: 7}, CostUSD: 0.125, Priced: true}, all[0].Totals.Models["opus"])
	require.Equal(t, task.Phase("plan"), all[1].Phase)
	require.Equal(t, map[string]task.ModelTotals{
		"opus":  {Tokens: task.Tokens{Input: 120, Output: 10, CacheCreation: 1, CacheRead: 5}, CostUSD: 0.75, Priced: true},
		"haiku": {Tokens: task.Tokens{Input: 3}},
	}, all[1].Totals.Models)
	// The lower-bound mark of a phase's events is kept with its sums.
	require.Equal(t, "side requests", all[1].LowerBound)
	require.Empty(t, all[0].LowerBound)
}
