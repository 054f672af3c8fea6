package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// keeper is the coordinator's side of trained bases: the events the fork
// registry wrote, waiting to be published by the loop, and what the loop
// is doing about each base's cache.
//
// The loop asks fork.Decide about every base in use after each iteration
// and acts on what is due:
//
//	wait        nothing; a timer wakes the loop at the earliest due time
//	keep-warm   a ping fork off the loop, which reads the cache and so
//	            restarts its clock
//	let-expire  a base.policy event, once
//	retrain     a new base trained off the loop; the old one is retired
//
// A base whose task has ended is retired; a parked or reviewed task's
// bases are left alone (no block is coming). An action that fails, or a
// ping that misses the cache, stops the keeping of that base, with an
// event saying so, rather than retrying in a loop.
type keeper struct {
	baseLocks

	mu      sync.Mutex
	pending []task.Event // written by the registry off the loop; published by it

	// Owned by the loop goroutine.
	busy   map[string]bool // an action on the base is in flight
	letGo  map[string]bool // its let-expire was recorded
	gaveUp map[string]bool // an action failed; the operator decides now
	timer  *time.Timer
}

// PolicyData is the Data of a base.policy event: the base, the action and
// the decision it followed.
type PolicyData struct {
	BaseID    string      `json:"base_id"`
	Action    fork.Action `json:"action"`
	Due       time.Time   `json:"due,omitzero"`
	ExpiresAt time.Time   `json:"expires_at,omitzero"`
	// NewBaseID names the base a retrain trained.
	NewBaseID string `json:"new_base_id,omitempty"`
	Failed    bool   `json:"failed,omitempty"`
}

// onEvent takes an event the registry wrote, from any goroutine, for the
// loop to publish.
func (s *forkService) onEvent(ev task.Event) {
	s.keep.mu.Lock()
	s.keep.pending = append(s.keep.pending, ev)
	s.keep.mu.Unlock()
	s.loop.poke()
}

// publishEvents tells subscribers of the registry's events (they are
// in the ledger already) and counts fork usage in the task's usage.
func (s *forkService) publishEvents() {
	s.keep.mu.Lock()
	evs := s.keep.pending
	s.keep.pending = nil
	s.keep.mu.Unlock()
	for _, ev := range evs {
		s.publish(ev)
		if ev.Kind != task.EvUsage || len(ev.Data) == 0 {
			continue
		}
		var d UsageData
		if json.Unmarshal(ev.Data, &d) == nil {
			s.addUsage(ev.TaskID, d.Phase, d.Totals, d.LowerBound)
		}
	}
}

// tick runs on the loop after every iteration: it publishes what the
// registry wrote, acts on every base whose decision is due and arms a
// timer for the next due time, so nothing polls.
func (s *forkService) tick(ctx context.Context) {
	s.publishEvents()
	p := s.bases.Load()
	if p == nil {
		return
	}
	k := &s.keep
	if k.busy == nil {
		k.busy, k.letGo, k.gaveUp = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	policy := s.reg.Policy()
	now := s.loop.now()
	var next time.Time
	for _, b := range *p {
		t, ok := s.task(b.TaskID)
		if !ok || !b.RetiredAt.IsZero() || k.busy[b.ID] || k.gaveUp[b.ID] {
			continue
		}
		if t.State.Terminal() {
			s.retire(ctx, b, fmt.Sprintf("its task is %s.", t.State))
			continue
		}
		if t.State == task.StateParked || t.State == task.StateAwaitingReview {
			continue // no block is coming until the operator moves it
		}
		d := fork.Decide(b, policy, now)
		if d.Action == fork.ActionLetExpire && !k.letGo[b.ID] {
			k.letGo[b.ID] = true
			s.recordPolicy(ctx, b, d, "Letting base %s expire: %s", baseShort(b.ID), d.Reason)
		}
		if d.Due.After(now) {
			if next.IsZero() || d.Due.Before(next) {
				next = d.Due
			}
			continue
		}
		switch d.Action {
		case fork.ActionKeepWarm:
			k.busy[b.ID] = true
			s.recordPolicy(ctx, b, d, "Keep-warm ping of base %s: %s", baseShort(b.ID), d.Reason)
			s.ping(t, b)
		case fork.ActionRetrain:
			k.busy[b.ID] = true
			s.recordPolicy(ctx, b, d, "Retraining base %s: %s", baseShort(b.ID), d.Reason)
			s.retrain(t, b, d)
		}
	}
	s.arm(now, next)
}

// arm sets the timer that wakes the loop at the next due time.
func (s *forkService) arm(now, next time.Time) {
	k := &s.keep
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	if next.IsZero() {
		return
	}
	k.timer = time.AfterFunc(max(next.Sub(now), 0), s.loop.poke)
}

// ping sends a keep-warm ping off the loop. A ping that missed the cache
// did not restart the clock, so the base is left to the operator.
func (s *forkService) ping(t task.Task, b fork.Base) {
	ctx := s.loop.io()
	s.loop.async(func() func() {
		res, err := s.pingBase(ctx, t, b)
		return func() {
			delete(s.keep.busy, b.ID)
			work := context.WithoutCancel(ctx)
			switch {
			case err != nil:
				s.giveUp(work, b, fmt.Sprintf("the keep-warm ping failed: %v", err))
			case !res.Hit:
				s.giveUp(work, b, "the keep-warm ping missed the cache, so it did not restart the clock")
			}
		}
	})
}

func (s *forkService) pingBase(ctx context.Context, t task.Task, b fork.Base) (fork.ForkResult, error) {
	fr, err := s.forkRun(t, b.Harness, b.Launch.Dir)
	if err != nil {
		return fork.ForkResult{}, err
	}
	defer s.keep.lock(b.ID)()
	return s.reg.Ping(ctx, b.ID, fr)
}

// retrain trains a new base for b's task off the loop; trainBase retires b.
func (s *forkService) retrain(t task.Task, b fork.Base, d fork.Decision) {
	ctx := s.loop.io()
	s.loop.async(func() func() {
		unlock := s.keep.lock(b.ID)
		nb, err := s.train(ctx, t, b.Harness)
		unlock()
		return func() {
			delete(s.keep.busy, b.ID)
			work := context.WithoutCancel(ctx)
			if err != nil {
				s.giveUp(work, b, fmt.Sprintf("the retrain failed: %v", err))
				return
			}
			_, cost := nb.Training.Sum()
			ev := s.policyEvent(b, d, fmt.Sprintf("Base %s retrained as %s for $%.4f; forks start from the new base.", baseShort(b.ID), baseShort(nb.ID), cost))
			ev.Data, _ = json.Marshal(PolicyData{BaseID: b.ID, Action: d.Action, NewBaseID: nb.ID})
			s.loop.record(work, ev)
		}
	})
}

// retire retires b on the loop (one store write) and says why.
func (s *forkService) retire(ctx context.Context, b fork.Base, why string) {
	d := fork.Decision{Action: fork.ActionRetired}
	if err := s.reg.Retire(ctx, b.ID); err != nil {
		s.giveUp(ctx, b, fmt.Sprintf("retiring it failed: %v", err))
		return
	}
	s.recordPolicy(ctx, b, d, "Base %s retired: %s", baseShort(b.ID), why)
}

// giveUp stops keeping b and tells the operator what to do instead.
func (s *forkService) giveUp(ctx context.Context, b fork.Base, why string) {
	s.keep.gaveUp[b.ID] = true
	ev := s.policyEvent(b, fork.Decision{}, fmt.Sprintf("The console stops keeping base %s: %s. Train a new base with `orchestra-tui fork train %s`.", baseShort(b.ID), why, b.TaskID.Short()))
	ev.Data, _ = json.Marshal(PolicyData{BaseID: b.ID, Failed: true})
	s.loop.record(ctx, ev)
}

// recordPolicy records a base.policy event for decision d.
func (s *forkService) recordPolicy(ctx context.Context, b fork.Base, d fork.Decision, format string, a ...any) {
	s.loop.record(ctx, s.policyEvent(b, d, fmt.Sprintf(format, a...)))
}

func (s *forkService) policyEvent(b fork.Base, d fork.Decision, text string) task.Event {
	ev := s.loop.event(b.TaskID, b.ID, task.EvBasePolicy, text)
	ev.Data, _ = json.Marshal(PolicyData{BaseID: b.ID, Action: d.Action, Due: d.Due, ExpiresAt: d.ExpiresAt})
	return ev
}
