package coord

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// The store is watched. A store file deleted while the engine runs keeps
// accepting writes (SQLite writes to the unlinked inode), so every task the
// run records is lost without an error; a read-only store fails every
// write. Either way the engine must stop placing work at once, say so once,
// plainly, and keep the live sessions running (their work is in their
// worktrees), and a headless run must exit non-zero: nothing recorded after
// the failure can be trusted, so nothing is reported green.

// A store without a file (PostgreSQL, reached over the network) fails in
// another way: a database restart or a network blip makes its calls fail
// for a while, then they work again. That fault is an outage, not a loss:
// placement pauses, live sessions keep running, the events that could not
// be appended wait in memory, and every lease tick asks the store again;
// once it answers, the waiting events are appended, placement resumes by
// itself, and for a TTL after that this engine takes over no other
// engine's task: their heartbeats were blocked by the same outage, so an
// old heartbeat says nothing about them until they have had a TTL to beat
// again.

// storeWatch is what the watcher knows of the store's file; it lives on the
// coordinator's loop.
type storeWatch struct {
	path  string // "" when the store has no file (PostgreSQL)
	ino   uint64
	dev   uint64
	fault string // the operator's message while the store fails
	// outage is set while fault is a network store's outage, which clears
	// itself once the store answers again.
	outage bool
	// since is when the outage began; back is when the store answered
	// again after the last one (zero if none).
	since, back time.Time
	// held are the events record could not append during the outage, in
	// order; they are appended when the store answers.
	held []task.Event
	// later are the steps held until the store answers (outage.go).
	later []func()
	// moving are the tasks whose move (a transition) is held among them:
	// the strand check leaves them alone, as it does a gated task.
	moving map[task.ID]bool
}

// pathed is a store that lives in a file.
type pathed interface{ Path() string }

// initStoreWatch records the store file's identity.
func (c *Coordinator) initStoreWatch() {
	p, ok := c.st.(pathed)
	if !ok {
		return
	}
	c.sw.path = p.Path()
	var st syscall.Stat_t
	if err := syscall.Stat(c.sw.path, &st); err == nil {
		c.sw.ino, c.sw.dev = st.Ino, uint64(st.Dev)
	}
}

// watchStore checks the store file is still the one opened and writable,
// or, during a network store's outage, whether it answers again. It runs
// on every lease tick: a stat and two access calls, or one small read.
func (c *Coordinator) watchStore(ctx context.Context) {
	if c.sw.outage {
		c.probeStore(ctx)
		return
	}
	if c.sw.fault != "" || c.sw.path == "" {
		return
	}
	path := c.sw.path
	deleted := func() {
		c.storeFailed(fmt.Sprintf("The store %s was deleted while the engine ran: nothing recorded from now on would survive.", path),
			"Stop the engine (orchestra-tui stop) and start it again: a new store is created; add the tasks again or resume them from a handoff.")
	}
	var st syscall.Stat_t
	err := syscall.Stat(path, &st)
	switch {
	case errors.Is(err, syscall.ENOENT):
		deleted()
		return
	case err != nil:
		c.storeFailed(fmt.Sprintf("The store %s cannot be read: %v.", path, err),
			"Check the file and its directory, then restart the engine.")
		return
	case c.sw.ino != 0 && (st.Ino != c.sw.ino || uint64(st.Dev) != c.sw.dev):
		c.storeFailed(fmt.Sprintf("The store %s was replaced by another file while the engine ran.", path),
			"Stop the engine (orchestra-tui stop) and start it again on the store you mean to use.")
		return
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			if errors.Is(err, unix.ENOENT) {
				deleted() // removed between the stat and this check
				return
			}
			c.storeFailed(fmt.Sprintf("The store %s cannot be written: %s is not writable (%v).", path, p, err),
				fmt.Sprintf("Make it writable by user %d again (chmod u+w, or remount the file system read-write), then restart the engine.", os.Getuid()))
			return
		}
	}
}

// storeFailed stops placement and publishes the failure, once: what
// happened, where, that live sessions keep running, and what to do.
func (c *Coordinator) storeFailed(what, todo string) {
	if c.sw.fault != "" {
		return
	}
	c.sw.fault = what + " Placement has stopped; live sessions keep running. " + todo
	ev := c.refusalEvent("", "", task.ReasonStoreFailed, c.sw.fault)
	c.hub.event(ev)
}

// writeFailed is storeFailed for a write that returned err. A store
// without a file is networked: its failure is an outage that clears itself
// (see above), with advice for a database server, not a disk.
func (c *Coordinator) writeFailed(err error) {
	if c.sw.path == "" {
		c.storeOutage(err)
		return
	}
	c.storeFailed(fmt.Sprintf("A write to the store %s failed: %v.", c.sw.path, err),
		"Check the disk (df -h) and the file's permissions, then restart the engine.")
}

// storeOutage begins an outage of a network store, once: placement pauses
// and the operator is told what failed and that it resumes by itself.
func (c *Coordinator) storeOutage(err error) {
	if c.sw.fault != "" {
		return
	}
	c.sw.outage, c.sw.since = true, c.now()
	c.sw.fault = StoreOutageText(err) + " Placement has paused and resumes by itself once it answers; " +
		"nothing recorded meanwhile is lost. " + StoreOutageAdvice
	ev := c.refusalEvent("", "", task.ReasonStoreFailed, c.sw.fault)
	c.hub.event(ev)
}

// StoreOutageAdvice is what an operator does about a PostgreSQL store that
// does not answer: the engine's log, a console's banner and `engines` say
// it alike.
const StoreOutageAdvice = "Check that the database server runs and is reachable (pg_isready -d \"$" + StoreURLEnv + "\"), " +
	"its own log (a restart or a failover shows there), and the engine's log."

// StoreOutageText says that a PostgreSQL store does not answer, and why.
func StoreOutageText(err error) string {
	return fmt.Sprintf("The store (PostgreSQL) does not answer: %s.", strings.TrimSuffix(oneLine(err.Error()), "."))
}

// probeStore asks a store in an outage whether it answers again; if it
// does, the held events are appended and the outage ends.
func (c *Coordinator) probeStore(ctx context.Context) {
	if _, err := c.st.EngineList(ctx); err != nil {
		return
	}
	if len(c.sw.held) > 0 {
		if err := c.st.EventAppend(ctx, c.sw.held...); err != nil {
			return // not yet: the next tick tries again
		}
	}
	held := c.sw.held
	c.sw.held, c.sw.outage, c.sw.fault, c.sw.back = nil, false, "", c.now()
	for _, ev := range held {
		c.hub.event(ev)
	}
	text := fmt.Sprintf("The store answers again after %s; placement resumes. No other engine's task is taken over until %s, a TTL from now: every engine's heartbeats were blocked alike.",
		c.sw.back.Sub(c.sw.since).Round(time.Second), c.sw.back.Add(c.fleet.ttl).Format(time.TimeOnly))
	c.record(ctx, c.event("", "", task.EvStoreRecovered, text))
	c.poke()
}

// takeoverPaused reports whether the store came back from an outage less
// than a TTL ago, when no other engine's heartbeat can be judged.
func (c *Coordinator) takeoverPaused(now time.Time) bool {
	return c.sw.outage || !c.sw.back.IsZero() && now.Sub(c.sw.back) < c.fleet.ttl
}
