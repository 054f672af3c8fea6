package coord

import (
	"context"
	"errors"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A result that the store could not take during its outage (a verify
// gate's verdict, the push after it, which must first read whose the lease
// is) is not acted on without the store, nor dropped: the task stays marked
// as gated, so neither the strand check nor a relaunch touches it, and the
// step waits here. Once the store answers and the engine trusts its own
// liveness again (its heartbeat landed: stepdown.go), the held steps run
// again, oldest first, on the loop; each then finds, through the fenced
// writes, whether the task is still this engine's.

// holdUntilBack keeps step to run once the store answers again.
func holdUntilBack(c *Coordinator, step func()) {
	c.sw.later = append(c.sw.later, step)
}

// resumeHeld runs the held steps when the store answers and the engine
// trusts itself; it runs on the loop after every iteration. A step that
// meets a new outage holds itself again.
func resumeHeld(c *Coordinator, _ context.Context) {
	if len(c.sw.later) == 0 || c.sw.outage || !c.sd.trusted() {
		return
	}
	steps := c.sw.later
	c.sw.later = nil
	for _, step := range steps {
		step()
	}
}

// holdSessionWrite holds a session row's write that a network store did
// not take (a database restart cut the connection) until the store answers
// again, and reports true; an embedded store's failure is not held. A
// session's end used to be lost so: the row stayed live until another
// engine's rescue marked it, seconds later, and the fault run's checker
// saw the session overlap its successor; the refusal called a connection
// error an illegal transition.
func holdSessionWrite(c *Coordinator, err error, again func()) bool {
	if c.sw.path != "" {
		return false
	}
	c.sw.writeFailed(err)
	holdUntilBack(c, again)
	return true
}

// storeUnreachable reports whether err, from a write, is a network
// store's failure to answer (an outage: a restart, a partition cut short
// by the call timeout) rather than the store's refusal of the write.
func storeUnreachable(sw *storeWatch, err error) bool {
	return sw.path == "" && !errors.Is(err, store.ErrStaleToken) && !errors.Is(err, store.ErrConflict) &&
		!errors.Is(err, store.ErrNotFound)
}

// holdTaskMove holds task id's move (a transition) that a network store
// did not answer until it does, and reports true; a refusal is not held.
// Until the move is made again, the strand check leaves the task alone
// (moving), as it does a gated task.
func holdTaskMove(c *Coordinator, err error, id task.ID, again func()) bool {
	if !storeUnreachable(&c.sw, err) {
		return false
	}
	c.sw.writeFailed(err)
	holdMoving(c, id, again)
	return true
}

// holdMoving holds task id's move until the store answers, marked as
// moving meanwhile so the strand check leaves the task alone.
func holdMoving(c *Coordinator, id task.ID, again func()) {
	if c.sw.moving == nil {
		c.sw.moving = map[task.ID]bool{}
	}
	c.sw.moving[id] = true
	holdUntilBack(c, func() {
		delete(c.sw.moving, id)
		again()
	})
}

// holdBehindAppends holds a move of task id while the store watch holds
// fenced appends of that task (an outage's), until the store answers and
// they are written first (probeStore), and reports true. A move written
// before them could release the lease they are fenced by, and they would
// then be refused as stale and lost.
func holdBehindAppends(c *Coordinator, id task.ID, again func()) bool {
	if !c.sw.holdsFenced(id) {
		return false
	}
	holdMoving(c, id, again)
	return true
}

// holdUnanswered holds a write that a network store did not answer
// (storeUnreachable) until it does, again then writing it, and reports
// true; a refusal, or an embedded store's failure, is not held.
func holdUnanswered(c *Coordinator, err error, again func()) bool {
	if !storeUnreachable(&c.sw, err) {
		return false
	}
	c.sw.writeFailed(err)
	holdUntilBack(c, again)
	return true
}
