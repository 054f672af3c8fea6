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

	"github.com/orchestra-tui/orchestra-tui/store"
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
	// order; they are appended when the store answers, a fenced write's
	// under its token still (a write of a lease lost meanwhile is dropped,
	// and stale says so to the task's owner).
	held  []heldWrite
	stale func(ctx context.Context, id task.ID)
	// later are the steps held until the store answers (outage.go).
	later []func()
	// moving are the tasks whose move (a transition) is held among them:
	// the strand check leaves them alone, as it does a gated task.
	moving map[task.ID]bool

	// What the watch sees of the loop: its clock and ledger, the store,
	// the subscribers, and the fleet's TTL (a takeover waits one after an
	// outage).
	loop loopView
	st   store.Store
	hub  *hub
	ttl  time.Duration
}

// pathed is a store that lives in a file.
type pathed interface{ Path() string }

// initStoreWatch records the store file's identity.
func (w *storeWatch) initStoreWatch() {
	p, ok := w.st.(pathed)
	if !ok {
		return
	}
	w.path = p.Path()
	var st syscall.Stat_t
	if err := syscall.Stat(w.path, &st); err == nil {
		w.ino, w.dev = st.Ino, uint64(st.Dev)
	}
}

// watchStore checks the store file is still the one opened and writable,
// or, during a network store's outage, whether it answers again. It runs
// on every lease tick: a stat and two access calls, or one small read.
func (w *storeWatch) watchStore(ctx context.Context) {
	if w.outage {
		w.probeStore(ctx)
		return
	}
	if w.fault != "" || w.path == "" {
		return
	}
	path := w.path
	deleted := func() {
		w.storeFailed(fmt.Sprintf("The store %s was deleted while the engine ran: nothing recorded from now on would survive.", path),
			"Stop the engine (orchestra-tui stop) and start it again: a new store is created; add the tasks again or resume them from a handoff.")
	}
	var st syscall.Stat_t
	err := syscall.Stat(path, &st)
	switch {
	case errors.Is(err, syscall.ENOENT):
		deleted()
		return
	case err != nil:
		w.storeFailed(fmt.Sprintf("The store %s cannot be read: %v.", path, err),
			"Check the file and its directory, then restart the engine.")
		return
	case w.ino != 0 && (st.Ino != w.ino || uint64(st.Dev) != w.dev):
		w.storeFailed(fmt.Sprintf("The store %s was replaced by another file while the engine ran.", path),
			"Stop the engine (orchestra-tui stop) and start it again on the store you mean to use.")
		return
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			if errors.Is(err, unix.ENOENT) {
				deleted() // removed between the stat and this check
				return
			}
			w.storeFailed(fmt.Sprintf("The store %s cannot be written: %s is not writable (%v).", path, p, err),
				fmt.Sprintf("Make it writable by user %d again (chmod u+w, or remount the file system read-write), then restart the engine.", os.Getuid()))
			return
		}
	}
}

// storeFailed stops placement and publishes the failure, once: what
// happened, where, that live sessions keep running, and what to do.
func (w *storeWatch) storeFailed(what, todo string) {
	if w.fault != "" {
		return
	}
	w.fault = what + " Placement has stopped; live sessions keep running. " + todo
	ev := w.loop.refusal("", "", task.ReasonStoreFailed, w.fault)
	w.hub.event(ev)
}

// writeFailed is storeFailed for a write that returned err. A store
// without a file is networked: its failure is an outage that clears itself
// (see above), with advice for a database server, not a disk.
func (w *storeWatch) writeFailed(err error) {
	if w.path == "" {
		w.storeOutage(err)
		return
	}
	w.storeFailed(fmt.Sprintf("A write to the store %s failed: %v.", w.path, err),
		"Check the disk (df -h) and the file's permissions, then restart the engine.")
}

// storeOutage begins an outage of a network store, once: placement pauses
// and the operator is told what failed and that it resumes by itself.
func (w *storeWatch) storeOutage(err error) {
	if w.fault != "" {
		return
	}
	w.outage, w.since = true, w.loop.now()
	w.fault = StoreOutageText(err) + " Placement has paused and resumes by itself once it answers; " +
		"nothing recorded meanwhile is lost. " + StoreOutageAdvice
	ev := w.loop.refusal("", "", task.ReasonStoreFailed, w.fault)
	w.hub.event(ev)
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
func (w *storeWatch) probeStore(ctx context.Context) {
	if _, err := w.st.EngineList(ctx); err != nil {
		return
	}
	var stale []task.ID
	for len(w.held) > 0 {
		h := w.held[0]
		var err error
		if h.token == 0 {
			err = w.st.EventAppend(ctx, h.evs...)
		} else {
			err = w.st.EventAppendFenced(ctx, h.token, h.evs...)
		}
		switch {
		case errors.Is(err, store.ErrStaleToken):
			// Another engine took the task over during the outage: what
			// this engine wrote under the old lease is not the task's.
			stale = append(stale, h.evs[0].TaskID)
		case err != nil:
			return // not yet: the next tick tries the rest again
		default:
			for _, ev := range h.evs {
				w.hub.event(ev)
			}
		}
		w.held = w.held[1:]
	}
	w.held, w.outage, w.fault, w.back = nil, false, "", w.loop.now()
	text := fmt.Sprintf("The store answers again after %s; placement resumes. No other engine's task is taken over until %s, a TTL from now: every engine's heartbeats were blocked alike.",
		w.back.Sub(w.since).Round(time.Second), w.back.Add(w.ttl).Format(time.TimeOnly))
	w.loop.record(ctx, w.loop.event("", "", task.EvStoreRecovered, text))
	for _, id := range stale {
		if w.stale != nil {
			w.stale(ctx, id)
		}
	}
	w.loop.poke()
}

// heldWrite is an append held through an outage: under token when it is
// fenced (0: unfenced).
type heldWrite struct {
	token int64
	evs   []task.Event
}

// hold keeps an append for the store's return.
func (w *storeWatch) hold(token int64, evs []task.Event) {
	if len(evs) > 0 {
		w.held = append(w.held, heldWrite{token: token, evs: evs})
	}
}

// holdsFenced reports whether an append of task id under a lease token is
// held for the store's return.
func (w *storeWatch) holdsFenced(id task.ID) bool {
	for _, h := range w.held {
		if h.token != 0 && len(h.evs) > 0 && h.evs[0].TaskID == id {
			return true
		}
	}
	return false
}

// takeoverPaused reports whether the store came back from an outage less
// than a TTL ago, when no other engine's heartbeat can be judged.
func (w *storeWatch) takeoverPaused(now time.Time) bool {
	return w.outage || !w.back.IsZero() && now.Sub(w.back) < w.ttl
}
