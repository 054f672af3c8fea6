package coord

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/sign"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// signer is the fleet key this engine signs the tasks it accepts with and
// checks every task with before anything of it runs. It needs nothing of
// the coordinator but, once at start-up, the tasks to sign (upgrade).
type signer struct {
	key sign.Key
	// created says this engine created the key, so it signs the tasks
	// from before signing, once; upgraded counts them.
	created  bool
	upgraded int
}

// loadSigner reads the fleet key (fleet.key, or its default place),
// creating it on first use.
func loadSigner(path string) (*signer, error) {
	k, created, err := sign.Load(path)
	if err != nil {
		return nil, err
	}
	return &signer{key: k, created: created}, nil
}

// Key is the fleet key this coordinator signs and checks tasks with, for
// the paths that accept a task without it (run --resume's import).
func (c *Coordinator) Key() sign.Key { return c.key.key }

// sign returns t signed with the fleet key: what this engine accepts.
func (s *signer) sign(t task.Task) task.Task {
	t.Signature = s.key.Sign(t)
	return t
}

// check returns why t must not run here, or nil. Every path that runs
// something of a task (its agent's launch and brief, the baseline, the
// gate, the merge queue's verify) asks first: the store alone must never
// be able to make an engine run a command.
func (s *signer) check(t task.Task) error {
	return s.key.Check(t, t.Signature)
}

// signatureRefusal is the refusal of a task whose signature does not
// check, naming it.
func signatureRefusal(err error) *task.Refusal {
	return &task.Refusal{Reason: task.ReasonBadSignature, Detail: err.Error() + "."}
}

// upgrade is the upgrade to signed tasks. The engine that creates the
// fleet key (the first start after the upgrade) signs every task (of ids,
// in tasks, the loop's) that has no signature yet and has not ended, once,
// each with an event. From then on a task without a signature is refused:
// a store row whose signature was blanked is not signed again, because the
// key already exists.
func (s *signer) upgrade(ctx context.Context, loop loopView, st store.Store, ids []task.ID, tasks map[task.ID]task.Task) {
	if !s.created {
		return
	}
	n := 0
	for _, id := range ids {
		t := tasks[id]
		if t.Signature != "" || t.State.Terminal() {
			continue
		}
		t = s.sign(t)
		if err := st.TaskSign(ctx, id, t.Signature); err != nil {
			loop.record(ctx, loop.refusal(id, "", task.ReasonStoreFailed, "Signing the task at the upgrade: "+err.Error()))
			continue
		}
		tasks[id] = t
		loop.record(ctx, loop.event(id, "", task.EvTaskSigned,
			fmt.Sprintf("Signed with the new fleet key %s: the task predates signing (upgrade).", s.key.ID())))
		n++
	}
	s.upgraded = n
}

// FleetKey names the fleet key this engine signs and checks tasks with,
// and how many tasks from before signing it signed at its start (the
// upgrade), for the engine's log.
func (c *Coordinator) FleetKey() (id string, upgraded int) { return c.key.key.ID(), c.key.upgraded }
