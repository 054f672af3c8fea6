package coord

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// What an engine writes about a task it runs carries its lease token, and
// the store refuses it once another engine took the task over (store
// CheckFence): the verdict of a gate that outlived the lease, the events
// of its run, its session rows. A refused write is not an error of the
// engine's: it learns that the task is not its own any more, says so once
// and moves nothing.

// recordFor appends events of a task this engine runs under token (0:
// unfenced, as record). It reports false when the store refused them as
// stale; they are then not published either.
func (g *gate) recordFor(ctx context.Context, token int64, evs ...task.Event) bool {
	if token == 0 {
		g.loop.record(ctx, evs...)
		return true
	}
	if g.sw.outage {
		g.sw.hold(token, evs) // fenced still when the store answers
		return true
	}
	err := g.st.EventAppendFenced(ctx, token, evs...)
	if errors.Is(err, store.ErrStaleToken) {
		return false
	}
	if err != nil {
		g.writeFailed(err)
		if g.sw.outage {
			g.sw.hold(token, evs)
		}
		return true
	}
	for _, ev := range evs {
		g.hub.event(ev)
	}
	return true
}

// staleVerdict is a gate's verdict the store refused: another engine took
// the task over while the gate ran. The verdict is dropped, the operator is
// told (an unfenced refusal: it belongs to no lease), and the task is read
// again as the other engine's.
func (g *gate) staleVerdict(ctx context.Context, id task.ID, sessionID string, token int64, v verify.Verdict, err error) {
	why := fmt.Sprintf("The verify gate's verdict (%s) under lease token %d was refused: another engine holds the task now, so this engine records nothing of it and moves nothing (%v).",
		v.Line(), token, err)
	g.loop.record(ctx, g.loop.refusal(id, sessionID, task.ReasonStaleLeaseToken, why))
	g.life.reloadTask(ctx, id)
	if g.tasks[id].State.Live() {
		g.foreign[id] = true
	}
}
