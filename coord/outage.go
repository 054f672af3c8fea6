package coord

import "context"

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
