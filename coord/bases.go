package coord

import (
	"context"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// BaseView is a trained base with its cache clock, computed when the
// snapshot is read.
type BaseView struct {
	ID      string
	TaskID  task.ID
	Model   string // the model that answered its training
	Launch  string // short hash of the fingerprint its forks must match
	Forks   int
	Created time.Time
	LastHit time.Time
	// TrainingCostUSD is what training it cost, so what a retrain would.
	TrainingCostUSD float64
	// ExpiresIn is the time left on the prompt cache; zero once expired.
	ExpiresIn time.Duration
	// Next is the policy's decision now: the action, when it is due and why.
	Next fork.Decision
}

// Forks returns the registry of trained bases on the coordinator's store,
// with the configured keep-warm policy. What it writes shows in the
// snapshot's Bases and, through session.usage events, in the task's usage.
func (c *Coordinator) Forks() *fork.Registry { return c.forks }

// newForks builds the registry; a change refreshes the bases the snapshot
// shows.
func (c *Coordinator) newForks() *fork.Registry {
	r := fork.NewRegistry(c.st, fork.PolicyFrom(c.cfg), c.now)
	r.OnChange = func() {
		// On a failed read the snapshot keeps the last list; the next
		// change or start-up reads again.
		_ = c.RefreshBases(context.Background())
	}
	r.OnEvent = c.forkEvent
	return r
}

// RefreshBases rereads the trained bases from the store for the snapshot.
func (c *Coordinator) RefreshBases(ctx context.Context) error {
	bases, err := c.forks.List(ctx, "")
	if err != nil {
		return fmt.Errorf("list trained bases: %w", err)
	}
	c.bases.Store(&bases)
	c.poke()
	return nil
}

// baseViews returns the bases in use with their clocks at now.
func (c *Coordinator) baseViews(now time.Time) []BaseView {
	p := c.bases.Load()
	if p == nil {
		return nil
	}
	policy := c.forks.Policy()
	var out []BaseView
	for _, b := range *p {
		if !b.RetiredAt.IsZero() {
			continue
		}
		_, cost := b.Training.Sum()
		d := fork.Decide(b, policy, now)
		out = append(out, BaseView{
			ID: b.ID, TaskID: b.TaskID, Model: b.Model, Launch: b.Launch.Short(), Forks: b.Forks,
			Created: b.CreatedAt, LastHit: b.LastHitAt, TrainingCostUSD: cost,
			ExpiresIn: max(d.ExpiresAt.Sub(now), 0), Next: d,
		})
	}
	return out
}
