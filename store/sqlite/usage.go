package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// migrationUsageTotals keeps usage sums per task, phase and model, written
// with each session.usage event (addUsage), and fills them from the ledger
// of a store made before it.
const migrationUsageTotals = `
CREATE TABLE usage_totals (
	task_id        TEXT NOT NULL,
	phase          TEXT NOT NULL,
	model          TEXT NOT NULL,
	input          INTEGER NOT NULL,
	output         INTEGER NOT NULL,
	cache_creation INTEGER NOT NULL,
	cache_read     INTEGER NOT NULL,
	cost_usd       REAL NOT NULL,
	priced         INTEGER NOT NULL, -- every addend was priced
	PRIMARY KEY (task_id, phase, model)
) STRICT;
INSERT INTO usage_totals
SELECT e.task_id, coalesce(json_extract(e.data, '$.phase'), ''), m.key,
	sum(coalesce(json_extract(m.value, '$.tokens.input'), 0)),
	sum(coalesce(json_extract(m.value, '$.tokens.output'), 0)),
	sum(coalesce(json_extract(m.value, '$.tokens.cache_creation'), 0)),
	sum(coalesce(json_extract(m.value, '$.tokens.cache_read'), 0)),
	sum(coalesce(json_extract(m.value, '$.cost_usd'), 0.0)),
	min(coalesce(json_extract(m.value, '$.priced'), 0))
FROM (SELECT task_id, data FROM events WHERE kind = 'session.usage' AND json_valid(data)
	AND json_type(data, '$.totals.models') = 'object') AS e,
	json_each(e.data, '$.totals.models') AS m
GROUP BY 1, 2, 3;
`

const upsertUsage = `INSERT INTO usage_totals
(task_id, phase, model, input, output, cache_creation, cache_read, cost_usd, priced)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (task_id, phase, model) DO UPDATE SET
	input = input + excluded.input, output = output + excluded.output,
	cache_creation = cache_creation + excluded.cache_creation, cache_read = cache_read + excluded.cache_read,
	cost_usd = cost_usd + excluded.cost_usd, priced = priced AND excluded.priced`

// addUsage adds a session.usage event's totals to usage_totals inside tx.
// Data the store cannot read adds nothing: the ledger keeps it as written.
func addUsage(ctx context.Context, tx *sql.Tx, e task.Event) error {
	for _, a := range store.UsageAdditions(e) {
		if _, err := tx.ExecContext(ctx, upsertUsage, string(a.TaskID), string(a.Phase), a.Model, a.Tokens.Input,
			a.Tokens.Output, a.Tokens.CacheCreation, a.Tokens.CacheRead, a.CostUSD, a.Priced); err != nil {
			return fmt.Errorf("add usage of task %s: %w", e.TaskID, err)
		}
	}
	return nil
}

// UsageList returns every task's usage per phase, from the running sums.
func (s *Store) UsageList(ctx context.Context) ([]store.UsageTotal, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT task_id, phase, model, input, output, cache_creation, cache_read,
cost_usd, priced FROM usage_totals ORDER BY task_id, phase, model`)
	if err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	defer rows.Close()
	var out []store.UsageTotal
	for rows.Next() {
		var (
			id, phase, model string
			m                task.ModelTotals
		)
		if err := rows.Scan(&id, &phase, &model, &m.Tokens.Input, &m.Tokens.Output, &m.Tokens.CacheCreation,
			&m.Tokens.CacheRead, &m.CostUSD, &m.Priced); err != nil {
			return nil, fmt.Errorf("list usage: %w", err)
		}
		out = store.AppendUsageRow(out, task.ID(id), task.Phase(phase), model, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	return out, nil
}
