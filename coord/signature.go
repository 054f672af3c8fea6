package coord

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/sign"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// loadKey reads the fleet key (fleet.key, or its default place), creating
// it on first use.
func (c *Coordinator) loadKey() error {
	k, created, err := sign.Load(c.cfg.Fleet.Key)
	if err != nil {
		return err
	}
	c.key, c.keyNew = k, created
	return nil
}

// Key is the fleet key this coordinator signs and checks tasks with, for
// the paths that accept a task without it (run --resume's import).
func (c *Coordinator) Key() sign.Key { return c.key }

// signed returns t signed with the fleet key: what this engine accepts.
func (c *Coordinator) signed(t task.Task) task.Task {
	t.Signature = c.key.Sign(t)
	return t
}

// badSignature returns why t must not run here, or nil. Every path that
// runs something of a task (its agent's launch and brief, the baseline,
// the gate, the merge queue's verify) asks first: the store alone must
// never be able to make an engine run a command.
func (c *Coordinator) badSignature(t task.Task) error {
	return c.key.Check(t, t.Signature)
}

// signatureRefusal is the refusal of a task whose signature does not
// check, naming it.
func signatureRefusal(err error) *task.Refusal {
	return &task.Refusal{Reason: task.ReasonBadSignature, Detail: err.Error() + "."}
}

// signUpgrade is the upgrade to signed tasks. The engine that creates the
// fleet key (the first start after the upgrade) signs every task that has
// no signature yet and has not ended, once, each with an event. From then
// on a task without a signature is refused: a store row whose signature
// was blanked is not signed again, because the key already exists.
func (c *Coordinator) signUpgrade(ctx context.Context) {
	if !c.keyNew {
		return
	}
	n := 0
	for _, id := range c.ids() {
		t := c.tasks[id]
		if t.Signature != "" || t.State.Terminal() {
			continue
		}
		t = c.signed(t)
		if err := c.st.TaskSign(ctx, id, t.Signature); err != nil {
			c.record(ctx, c.refusalEvent(id, "", task.ReasonStoreFailed, "Signing the task at the upgrade: "+err.Error()))
			continue
		}
		c.tasks[id] = t
		c.record(ctx, c.event(id, "", task.EvTaskSigned,
			fmt.Sprintf("Signed with the new fleet key %s: the task predates signing (upgrade).", c.key.ID())))
		n++
	}
	c.upgraded = n
}

// FleetKey names the fleet key this engine signs and checks tasks with,
// and how many tasks from before signing it signed at its start (the
// upgrade), for the engine's log.
func (c *Coordinator) FleetKey() (id string, upgraded int) { return c.key.ID(), c.upgraded }
