package sqlq

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// upsertUsage adds one phase and model's usage to its running sum. The old
// row's columns are qualified with the table's name, which both dialects
// read the same.
const upsertUsage = `INSERT INTO usage_totals
(task_id, phase, model, input, output, cache_creation, cache_read, cost_usd, priced, lower_bound)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (task_id, phase, model) DO UPDATE SET
	input = usage_totals.input + excluded.input, output = usage_totals.output + excluded.output,
	cache_creation = usage_totals.cache_creation + excluded.cache_creation,
	cache_read = usage_totals.cache_read + excluded.cache_read,
	cost_usd = usage_totals.cost_usd + excluded.cost_usd, priced = usage_totals.priced AND excluded.priced,
	lower_bound = CASE WHEN excluded.lower_bound <> '' THEN excluded.lower_bound ELSE usage_totals.lower_bound END`

// AddUsage adds the session.usage events' totals to usage_totals inside
// the writer's transaction. Data the store cannot read adds nothing: the
// ledger keeps it as written.
func AddUsage(ctx context.Context, tx Tx, events ...task.Event) error {
	for _, e := range events {
		for _, a := range store.UsageAdditions(e) {
			if _, err := tx.Exec(ctx, upsertUsage, string(a.TaskID), string(a.Phase), a.Model, a.Tokens.Input,
				a.Tokens.Output, a.Tokens.CacheCreation, a.Tokens.CacheRead, a.CostUSD, a.Priced, a.LowerBound); err != nil {
				return fmt.Errorf("add usage of task %s: %w", e.TaskID, err)
			}
		}
	}
	return nil
}

// UsageList returns every task's usage per phase, from the running sums.
func (o Ops) UsageList(ctx context.Context) ([]store.UsageTotal, error) {
	rows, err := o.D.Reads().Query(ctx, `SELECT task_id, phase, model, input, output, cache_creation, cache_read,
cost_usd, priced, lower_bound FROM usage_totals ORDER BY task_id, phase, model`)
	if err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	defer rows.Close()
	var out []store.UsageTotal
	for rows.Next() {
		var (
			id, phase, model, lower string
			m                       task.ModelTotals
		)
		if err := rows.Scan(&id, &phase, &model, &m.Tokens.Input, &m.Tokens.Output, &m.Tokens.CacheCreation,
			&m.Tokens.CacheRead, &m.CostUSD, &m.Priced, &lower); err != nil {
			return nil, fmt.Errorf("list usage: %w", err)
		}
		out = store.AppendUsageRow(out, task.ID(id), task.Phase(phase), model, m, lower)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	return out, nil
}
