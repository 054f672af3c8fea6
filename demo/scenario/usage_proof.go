package scenario

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// proveUsage sums the task's session.usage events, which the console wrote
// from the agent CLI's own records, and compares them with what the model
// server reported.
func (s *Scenario) proveUsage(ctx context.Context, id task.ID) error {
	evs, err := s.Opened.Store.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return err
	}
	var got usage.Tokens
	sessions := 0
	for _, e := range evs {
		if e.Kind != task.EvUsage || len(e.Data) == 0 {
			continue
		}
		var d coord.UsageData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("a usage event's data: %w", err)
		}
		tk, _ := d.Totals.Sum()
		got = got.Add(tk)
		sessions++
	}
	want := s.opts.Harness.ReportedUsage()
	if sessions == 0 {
		return fmt.Errorf("no session recorded its usage; the model server reported %s", tokensText(want))
	}
	if got != want {
		return fmt.Errorf("the console recorded %s over %d sessions; the model server reported %s", tokensText(got), sessions, tokensText(want))
	}
	return nil
}

func tokensText(t usage.Tokens) string {
	return fmt.Sprintf("%d in, %d out, %d cache write, %d cache read", t.Input, t.Output, t.CacheCreation, t.CacheRead)
}
