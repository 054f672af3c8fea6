package store

import (
	"context"
	"time"
)

// DefaultCallTimeout bounds every store call whose context has no deadline
// of its own (the coordinator's loop and the CLI call with one that never
// ends). A PostgreSQL connection whose bytes a network drops (a partition,
// a proxy that stops forwarding) would otherwise hang its caller for good;
// bounded, the call fails, and a network store's failure is an outage the
// engine weathers (retries with backoff, placement resumes once the store
// answers). Every call is milliseconds on a healthy store, so the bound is
// generous; SQLite's busy timeout is the same figure. [store] timeout in
// orchestra.toml sets another.
const DefaultCallTimeout = 10 * time.Second

// Bound returns ctx with a deadline d from now when ctx has none of its own
// and d is positive, else ctx itself; the cancel func must be called once
// the call is done, as with context.WithTimeout.
func Bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
