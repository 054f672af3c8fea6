package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// migrationUsageTotals keeps usage sums per task, phase and model, written
// with each session.usage event (sqlq.AddUsage), and fills them from the ledger
// of a store made before it. Ledger data that is not JSON adds nothing.
const migrationUsageTotals = `
CREATE TABLE usage_totals (
	task_id        text NOT NULL,
	phase          text NOT NULL,
	model          text NOT NULL,
	input          bigint NOT NULL,
	output         bigint NOT NULL,
	cache_creation bigint NOT NULL,
	cache_read     bigint NOT NULL,
	cost_usd       double precision NOT NULL,
	priced         boolean NOT NULL, -- every addend was priced
	PRIMARY KEY (task_id, phase, model)
);
CREATE FUNCTION pg_temp.orchestra_jsonb(t text) RETURNS jsonb AS $$
BEGIN
	RETURN t::jsonb;
EXCEPTION WHEN others THEN
	RETURN NULL;
END;
$$ LANGUAGE plpgsql IMMUTABLE;
INSERT INTO usage_totals
SELECT e.task_id, coalesce(e.j->>'phase', ''), m.key,
	sum(coalesce((m.value->'tokens'->>'input')::bigint, 0)),
	sum(coalesce((m.value->'tokens'->>'output')::bigint, 0)),
	sum(coalesce((m.value->'tokens'->>'cache_creation')::bigint, 0)),
	sum(coalesce((m.value->'tokens'->>'cache_read')::bigint, 0)),
	sum(coalesce((m.value->>'cost_usd')::double precision, 0)),
	bool_and(coalesce((m.value->>'priced')::boolean, false))
FROM (SELECT task_id, pg_temp.orchestra_jsonb(data) AS j FROM events WHERE kind = 'session.usage') AS e,
	jsonb_each(CASE WHEN jsonb_typeof(e.j->'totals'->'models') = 'object'
		THEN e.j->'totals'->'models' ELSE '{}'::jsonb END) AS m
GROUP BY 1, 2, 3;
`

// migrationUsageLowerBound keeps with the sums why they are a lower bound
// (a session whose CLI records some of its requests nowhere), so a
// restarted engine and `status --json` still say so. The ledger's
// session.usage events mark the phases summed before it. The parse
// function is migration 2's, made again: it lives for one connection.
const migrationUsageLowerBound = `
ALTER TABLE usage_totals ADD COLUMN lower_bound text NOT NULL DEFAULT '';
CREATE OR REPLACE FUNCTION pg_temp.orchestra_jsonb(t text) RETURNS jsonb AS $$
BEGIN
	RETURN t::jsonb;
EXCEPTION WHEN others THEN
	RETURN NULL;
END;
$$ LANGUAGE plpgsql IMMUTABLE;
UPDATE usage_totals u SET lower_bound = m.lower_bound
FROM (SELECT DISTINCT ON (task_id, phase) task_id, phase, lower_bound FROM (
		SELECT e.seq, e.task_id, coalesce(e.j->>'phase', '') AS phase, e.j->>'lower_bound' AS lower_bound
		FROM (SELECT seq, task_id, pg_temp.orchestra_jsonb(data) AS j FROM events WHERE kind = 'session.usage') AS e
		WHERE jsonb_typeof(e.j->'lower_bound') = 'string' AND e.j->>'lower_bound' <> '') AS x
	ORDER BY task_id, phase, seq DESC) AS m
WHERE u.task_id = m.task_id AND u.phase = m.phase;
`

// modelSep separates models in TaskSummaries' aggregate; no model id holds it.
const modelSep = "\x1f"

// TaskSummaries returns every task with its latest verdict and its
// sessions' models, in one query over the per-task indexes.
func (s *Store) TaskSummaries(ctx context.Context) ([]store.TaskSummary, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+taskColumns+`,
	(SELECT v.verdict FROM verdicts v WHERE v.task_id = t.id ORDER BY v.id DESC LIMIT 1),
	(SELECT string_agg(x.model, chr(31) ORDER BY x.first) FROM (SELECT s.model, min(s.started_at) AS first
		FROM sessions s WHERE s.task_id = t.id AND s.model <> '' GROUP BY s.model) x)
FROM tasks t ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.TaskSummary, error) {
		var verdict, models *string
		t, err := scanTask(sqlq.WithExtra{Row: row, Extra: []any{&verdict, &models}})
		if err != nil {
			return store.TaskSummary{}, err
		}
		sum := store.TaskSummary{Task: t}
		if verdict != nil {
			var v task.Verdict
			if err := json.Unmarshal([]byte(*verdict), &v); err != nil {
				return sum, fmt.Errorf("verdict of %s: %w", t.ID, err)
			}
			v.At = v.At.UTC()
			sum.Verdict = &v
		}
		if models != nil && *models != "" {
			sum.Models = strings.Split(*models, modelSep)
		}
		return sum, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}
