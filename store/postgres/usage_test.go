package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A store made before the sums kept their lower-bound mark gets it from
// its ledger when it is opened: a phase whose latest marked session.usage
// event said why is marked, one with no marked event is not, and an event
// whose data does not parse marks nothing.
func TestUsageLowerBoundFilledFromAnOlderLedger(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	url := c.NewDatabase(t)
	ctx := context.Background()
	pp, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	old := &Store{pool: pool{Pool: pp}, where: "old"}
	require.NoError(t, old.migrate(ctx, 7), "the schema before the mark")
	for _, data := range []string{
		`{"session_id":"s1","phase":"plan","totals":{"models":{"opus":{"tokens":{"input":100}}}},"lower_bound":"older"}`,
		`{"session_id":"s2","phase":"plan","totals":{"models":{"opus":{"tokens":{"input":20}}}},"lower_bound":"side requests"}`,
		`{"session_id":"s3","phase":"plan","totals":{"models":{"haiku":{"tokens":{"input":3}}}}}`,
		`{"session_id":"s4","phase":"implement","totals":{"models":{"opus":{"tokens":{"input":7}}}}}`,
		`not json`,
	} {
		_, err := pp.Exec(ctx, `INSERT INTO events (id, task_id, session_id, kind, reason, text, data, at)
VALUES ($1, 'T1', 's', 'session.usage', '', 'used', $2, now())`, task.NewULID(time.Now()), data)
		require.NoError(t, err)
		_, err = pp.Exec(ctx, `INSERT INTO usage_totals SELECT 'T1', coalesce(j->>'phase', ''), m.key,
	coalesce((m.value->'tokens'->>'input')::bigint, 0), 0, 0, 0, 0, false
FROM (SELECT $1::text AS d) AS x, LATERAL (SELECT CASE WHEN x.d LIKE '{%' THEN x.d::jsonb END AS j) AS y,
	jsonb_each(coalesce(y.j->'totals'->'models', '{}'::jsonb)) AS m
ON CONFLICT (task_id, phase, model) DO UPDATE SET input = usage_totals.input + excluded.input`, data)
		require.NoError(t, err)
	}
	pp.Close()

	st, err := Open(ctx, url)
	require.NoError(t, err)
	defer st.Close()
	all, err := st.UsageList(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, task.Phase("implement"), all[0].Phase)
	require.Empty(t, all[0].LowerBound)
	require.Equal(t, task.Phase("plan"), all[1].Phase)
	require.Equal(t, int64(120), all[1].Totals.Models["opus"].Tokens.Input)
	require.Equal(t, "side requests", all[1].LowerBound, "the latest marked event's reason")
}
