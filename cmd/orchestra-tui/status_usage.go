package main

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// statusUsage is a task's spend in `status --json`: the tokens and cost its
// sessions recorded, and, when its CLI makes requests it records nowhere,
// why the figures are a lower bound.
type statusUsage struct {
	Tokens     task.Tokens `json:"tokens"`
	CostUSD    float64     `json:"cost_usd"`
	LowerBound string      `json:"lower_bound,omitempty"`
}

// statusSpend reads every task's usage from the sums the store keeps (one
// query) and marks a lower bound as the engine does (coord.UsageLowerBound).
func statusSpend(ctx context.Context, st store.Store, root string) (map[task.ID]*statusUsage, error) {
	us, err := st.UsageList(ctx)
	if err != nil || len(us) == 0 {
		return nil, err
	}
	cfg, err := config.Load(root)
	if err != nil {
		cfg = config.Default() // the figures stand without the harness table
	}
	out := map[task.ID]*statusUsage{}
	for _, u := range us {
		s := out[u.TaskID]
		if s == nil {
			s = &statusUsage{}
			out[u.TaskID] = s
			if t, err := st.TaskGet(ctx, u.TaskID); err == nil {
				s.LowerBound = coord.UsageLowerBound(cfg, t)
			}
		}
		tk, cost := u.Totals.Sum()
		s.Tokens = s.Tokens.Add(tk)
		s.CostUSD += cost
	}
	return out, nil
}
