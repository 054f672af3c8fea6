package fork

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// Base is a trained base as the registry works with it: the stored row
// with its fingerprint and training cost read.
type Base struct {
	// ID is the agent's conversation id, the one forks resume.
	ID      string
	TaskID  task.ID
	Harness string
	// Model is the model that answered the training.
	Model string
	// Launch is the fingerprint every fork must match exactly.
	Launch    session.Launch
	Training  usage.Totals
	CreatedAt time.Time
	// LastHitAt is the last time a fork read the base from the cache;
	// the cache clock runs from it.
	LastHitAt time.Time
	// LastUsedAt is the last real use (training or a block's fork); pings
	// do not move it. The next fork is expected from it.
	LastUsedAt time.Time
	Forks      int
	RetiredAt  time.Time
}

// Row returns b as the store keeps it.
func (b Base) Row() store.Base {
	training, _ := json.Marshal(b.Training) // maps of numbers only
	return store.Base{
		ID: b.ID, TaskID: b.TaskID, Harness: b.Harness, Model: b.Model,
		Fingerprint: b.Launch.JSON(), FingerprintHash: b.Launch.Hash, Training: string(training),
		CreatedAt: b.CreatedAt, LastHitAt: b.LastHitAt, LastUsedAt: b.LastUsedAt, Forks: b.Forks, RetiredAt: b.RetiredAt,
	}
}

// FromRow reads a stored base.
func FromRow(r store.Base) (Base, error) {
	l, err := session.ParseLaunch(r.Fingerprint)
	if err != nil {
		return Base{}, fmt.Errorf("base %s: %w", r.ID, err)
	}
	var tot usage.Totals
	if r.Training != "" {
		if err := json.Unmarshal([]byte(r.Training), &tot); err != nil {
			return Base{}, fmt.Errorf("base %s: read its training cost: %w", r.ID, err)
		}
	}
	used := r.LastUsedAt
	if used.IsZero() {
		used = r.LastHitAt // a base stored before last use was kept
	}
	return Base{
		ID: r.ID, TaskID: r.TaskID, Harness: r.Harness, Model: r.Model, Launch: l, Training: tot,
		CreatedAt: r.CreatedAt, LastHitAt: r.LastHitAt, LastUsedAt: used, Forks: r.Forks, RetiredAt: r.RetiredAt,
	}, nil
}
