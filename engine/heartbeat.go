package engine

import (
	"context"
	"os"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// HeartbeatEvery is how often an engine records that it is alive and how
// busy it is (`orchestra-tui engines` shows it), unless [fleet] heartbeat
// says otherwise. On a shared store it is what other engines judge its
// liveness by ([fleet] ttl).
const HeartbeatEvery = coord.HeartbeatEvery

// heartbeat records the engine in the store before it returns, then every
// HeartbeatEvery until ctx ends, then records its clean stop. The returned
// channel closes when that last write is done: only then may the store be
// closed. kept, when it says so at the stop, records the stop as one that
// left the agents running for this machine's next engine (store.Engine's
// Kept): other machines' engines then take none of its tasks over for a
// TTL.
func heartbeat(ctx context.Context, o *coord.Opened, version string, kept func() bool, logf func(string, ...any)) <-chan struct{} {
	done := make(chan struct{})
	host := coord.HostName(o.Config.Fleet.Host)
	every := o.Config.Fleet.Heartbeat.Duration
	if every <= 0 {
		every = HeartbeatEvery
	}
	// A beat that lands later than the engine's trust window is of no
	// use to it; one that lands sooner is, however slow.
	ttl := o.Config.Fleet.TTL.Duration
	if ttl <= 0 {
		ttl = coord.EngineTTL
	}
	beatTimeout := ttl - ttl/coord.StepDownMargin
	slots := 0
	for _, s := range o.Config.EffectiveSlots() {
		slots += s.Capacity
	}
	rec := store.Engine{
		ID: o.Holder(), Host: host, Pid: os.Getpid(), Version: version, Repo: o.Repo.Root,
		Slots: slots, StartedAt: time.Now().UTC(), SSH: o.Config.Fleet.SSH,
	}
	// How another machine reaches this engine (relay.go): this machine by
	// its ssh destination, and this very binary on it.
	if rec.SSH == "" {
		rec.SSH, _ = os.Hostname()
	}
	rec.Bin, _ = os.Executable()
	beat := func(ctx context.Context, stopped bool) {
		rec.HeartbeatAt = time.Now().UTC()
		rec.Busy = 0
		for _, tv := range o.Snapshot().Tasks {
			if tv.SessionID != "" {
				rec.Busy++
			}
		}
		if stopped {
			rec.StoppedAt, rec.Busy = rec.HeartbeatAt, 0
			rec.Kept = kept != nil && kept()
		}
		// A beat that hangs (a partition) must come back: the engine's
		// trust in itself runs from the start of its last beat that
		// landed (coord.NoteBeat), and a hung one tells it nothing.
		sent := time.Now()
		bctx, cancel := context.WithTimeout(ctx, beatTimeout)
		err := o.Store.EngineHeartbeat(bctx, rec)
		cancel()
		o.NoteBeat(sent, err)
		if err != nil && logf != nil {
			logf("heartbeat: %v", err)
		}
	}
	// The first beat is written before the engine starts work, so an
	// engine that answers has been recorded.
	beat(ctx, false)
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				beat(ctx, false)
			case <-ctx.Done():
				wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				beat(wctx, true)
				cancel()
				return
			}
		}
	}()
	return done
}
