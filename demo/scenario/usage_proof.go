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
// server served, side requests included. A reply still in flight when the
// console killed a session (the lease-expiry beat) may never reach the
// agent's records, and a session whose usage the console marked as a lower
// bound (its CLI records some requests nowhere) may have recorded less
// than it was served: what is missing must be at most what was served
// while such sessions ran, and everything else must match token for token.
func (s *Scenario) proveUsage(ctx context.Context, id task.ID) error {
	evs, err := s.Opened.Store.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return err
	}
	var got usage.Tokens
	sessions := 0
	lower := map[string]bool{}
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
		lower[d.SessionID] = d.LowerBound != ""
	}
	ss, err := s.Opened.Store.SessionList(ctx, id)
	if err != nil {
		return err
	}
	var want, excused usage.Tokens
	for _, r := range s.opts.Harness.ReportedUsage() {
		want = want.Add(r.Tokens)
		for _, ses := range ss {
			if (ses.Status == store.SessionKilled || lower[ses.ID]) && !r.At.Before(ses.StartedAt) && (ses.EndedAt.IsZero() || !r.At.After(ses.EndedAt)) {
				excused = excused.Add(r.Tokens)
				break
			}
		}
	}
	if sessions == 0 {
		return fmt.Errorf("no session recorded its usage; the model server reported %s", tokensText(want))
	}
	missing := usage.Tokens{Input: want.Input - got.Input, Output: want.Output - got.Output,
		CacheCreation: want.CacheCreation - got.CacheCreation, CacheRead: want.CacheRead - got.CacheRead}
	if !within(missing, excused) {
		return fmt.Errorf("the console recorded %s over %d sessions; the model server served %s, of which %s while a killed or lower-bound session ran",
			tokensText(got), sessions, tokensText(want), tokensText(excused))
	}
	return nil
}

// within reports whether every column of d is between 0 and the same column
// of limit: the console never records more than was served, and misses at
// most what was in flight in killed sessions.
func within(d, limit usage.Tokens) bool {
	in := func(v, max int64) bool { return v >= 0 && v <= max }
	return in(d.Input, limit.Input) && in(d.Output, limit.Output) &&
		in(d.CacheCreation, limit.CacheCreation) && in(d.CacheRead, limit.CacheRead)
}

func tokensText(t usage.Tokens) string {
	return fmt.Sprintf("%d in, %d out, %d cache write, %d cache read", t.Input, t.Output, t.CacheCreation, t.CacheRead)
}
