package coord

import (
	"context"
	"time"
)

// Start-up under an outage. An engine on a network store (PostgreSQL) that
// starts while the database restarts or a connection is cut must not exit:
// its session hosts wait to be taken up, and a service manager's restart
// loop is no substitute (a console starts the engine in the background).
// So each store step of the start-up (listen, load, reconcile, the store
// check, the bases) is retried with a backoff until it succeeds or the
// engine is stopped. A step is retried alone, once the steps before it
// succeeded; each either fails before changing anything it would redo or
// is written to be run again (reconcile skips what it already took up).
// The operator is told once, in the engine's log and the refusal stream.
// An embedded store (SQLite) fails for good: its error ends the start-up.

// startRetryFirst and startRetryMax bound the backoff between two tries
// of a start-up step: it doubles from the first to the cap.
const (
	startRetryFirst = 50 * time.Millisecond
	startRetryMax   = 2 * time.Second
)

// startRetry retries the store steps of one start-up.
type startRetry struct {
	// shared is set for a network store; an embedded one is not retried.
	shared bool
	// tell tells the operator of the first failure, once.
	tell func(error)
	told bool
}

// do runs step, and again after a backoff while it fails on a network
// store, until it succeeds or ctx ends (the step's error is then returned).
func (r *startRetry) do(ctx context.Context, step func() error) error {
	wait := startRetryFirst
	for {
		err := step()
		if err == nil || !r.shared || ctx.Err() != nil {
			return err
		}
		if !r.told {
			r.told = true
			r.tell(err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return err
		case <-timer.C:
		}
		wait = min(2*wait, startRetryMax)
	}
}
