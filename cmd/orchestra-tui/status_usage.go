package main

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// statusUsage is a task's spend in `status --json`: the tokens and cost its
// sessions recorded, and, when a session's CLI made requests it records
// nowhere, why the figures are a lower bound.
type statusUsage struct {
	Tokens     task.Tokens `json:"tokens"`
	CostUSD    float64     `json:"cost_usd"`
	LowerBound string      `json:"lower_bound,omitempty"`
}

// statusSpend reads every task's usage from the sums the store keeps (one
// query), with the lower-bound marks its sessions' usage events carried.
func statusSpend(ctx context.Context, st store.Store) (map[task.ID]*statusUsage, error) {
	us, err := st.UsageList(ctx)
	if err != nil || len(us) == 0 {
		return nil, err
	}
	out := map[task.ID]*statusUsage{}
	for _, u := range us {
		s := out[u.TaskID]
		if s == nil {
			s = &statusUsage{}
			out[u.TaskID] = s
		}
		if u.LowerBound != "" {
			s.LowerBound = u.LowerBound
		}
		tk, cost := u.Totals.Sum()
		s.Tokens = s.Tokens.Add(tk)
		s.CostUSD += cost
	}
	return out, nil
}
