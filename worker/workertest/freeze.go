package workertest

import (
	"errors"
	"slices"
	"sync"
	"time"
)

// frozen holds, per fake, whether the coordinator froze it (a step-down
// freezes an engine's agents; coord.Freezer). Kept beside the fake, not in
// it, so the fake's own state stays what its tests know.
var frozen sync.Map // *Fake -> bool

// Freeze freezes the fake as SIGSTOP would its agent; an ended fake
// cannot be.
func (f *Fake) Freeze() error {
	select {
	case <-f.done:
		return errors.New("the fake has ended")
	default:
	}
	frozen.Store(f, true)
	return nil
}

// Thaw lets a frozen fake go on, as SIGCONT would.
func (f *Fake) Thaw() error {
	frozen.Store(f, false)
	return nil
}

// Frozen reports whether the coordinator froze the fake and has not thawed
// it.
func (f *Fake) Frozen() bool {
	v, _ := frozen.Load(f)
	b, _ := v.(bool)
	return b
}

// Trusted is one trust the coordinator gave a fake (coord.Truster, a
// session host's dead-man switch): its deadline, and whether the fake was
// frozen when it came.
type Trusted struct {
	Until  time.Time
	Frozen bool
}

var (
	trustMu sync.Mutex
	trusts  = map[*Fake][]Trusted{}
)

// Trust records a trust; the fake does not freeze itself when it runs out
// (its tests read Trusts).
func (f *Fake) Trust(until time.Time) {
	trustMu.Lock()
	defer trustMu.Unlock()
	trusts[f] = append(trusts[f], Trusted{Until: until, Frozen: f.Frozen()})
}

// Trusts returns the trusts the fake was given, in order.
func (f *Fake) Trusts() []Trusted {
	trustMu.Lock()
	defer trustMu.Unlock()
	return slices.Clone(trusts[f])
}
