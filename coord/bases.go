package coord

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
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

// forkService is the coordinator's side of trained bases (package fork):
// the registry on the coordinator's store, the latest list of bases the
// snapshot shows, the fork commands (forks.go) and the keeping warm of
// each base in use (keepwarm.go). Its view of the coordinator is the loop
// (loopView), the store, the harnesses and one function for each thing of
// the loop's it reads or adds to.
type forkService struct {
	reg *fork.Registry
	// bases is the registry's latest list, read by Snapshot, whose cache
	// clocks are computed at read time.
	bases atomic.Pointer[[]fork.Base]
	// keep publishes the registry's events and keeps bases warm.
	keep keeper

	loop    loopView
	st      store.Store
	harness map[string]session.Spec
	vars    map[string]string // harness argv placeholders (Params.Vars)
	environ []string
	// worktree adds (or finds) a task's worktree and returns its path.
	worktree func(name, branch, base string) (string, error)
	// background renders the brief a session of t in dir would get: the
	// background a base is trained on. It reads the store; off the loop.
	background func(ctx context.Context, t task.Task, dir string) (string, error)
	// task is the loop's copy of a task; on the loop only.
	task func(task.ID) (task.Task, bool)
	// addUsage adds a fork's usage to its task's, on the loop.
	addUsage func(id task.ID, p task.Phase, tot usage.Totals, lower string)
	// publish tells subscribers of an event already in the ledger.
	publish func(task.Event)
}

// newForkService builds the service and its registry on st, with the
// configured keep-warm policy; a change the registry makes refreshes the
// bases the snapshot shows.
func newForkService(s *forkService, cfg config.Config) *forkService {
	s.reg = fork.NewRegistry(s.st, fork.PolicyFrom(cfg), s.loop.now)
	s.reg.OnChange = func() {
		// On a failed read the snapshot keeps the last list; the next
		// change or start-up reads again.
		_ = s.refresh(context.Background())
	}
	s.reg.OnEvent = s.onEvent
	return s
}

// refresh rereads the trained bases from the store for the snapshot.
func (s *forkService) refresh(ctx context.Context) error {
	bases, err := s.reg.List(ctx, "")
	if err != nil {
		return fmt.Errorf("list trained bases: %w", err)
	}
	s.bases.Store(&bases)
	s.loop.poke()
	return nil
}

// views returns the bases in use with their clocks at now.
func (s *forkService) views(now time.Time) []BaseView {
	p := s.bases.Load()
	if p == nil {
		return nil
	}
	policy := s.reg.Policy()
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
