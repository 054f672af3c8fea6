package coord

import (
	"context"
	"errors"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// loopView is what a service of the coordinator sees of its loop, and all
// it sees: the injected clock, the ledger's writes (recorded and published
// by the loop, held through a store outage), a way to run slow work off
// the loop whose result is applied on it, a way to wake it, and its IO
// context. A service holds this and the few fields of its own concern,
// never the coordinator itself.
type loopView struct {
	now func() time.Time
	// record appends events to the ledger and publishes them; on the loop.
	record func(context.Context, ...task.Event)
	// async runs f off the loop; the closure f returns is applied on it.
	async func(f func() func())
	// poke wakes the loop for another iteration; safe from any goroutine.
	poke func()
	// io is Run's context (nil before Run sets it): cancelled at shutdown,
	// it aborts work off the loop.
	io func() context.Context
}

// loopView returns the view of the loop the coordinator's services hold.
func loopOf(c *Coordinator) loopView {
	return loopView{
		now:    c.now,
		record: c.record,
		async:  c.async,
		poke:   c.poke,
		io:     func() context.Context { return c.io },
	}
}

// event is a new ledger event stamped by the loop's clock.
func (l loopView) event(id task.ID, sessionID string, kind task.Kind, text string) task.Event {
	return task.Event{ID: task.NewULID(l.now()), TaskID: id, SessionID: sessionID, Kind: kind, Text: text, At: l.now()}
}

// refusal is a refusal event for reason, its sentence followed by detail
// (as Coordinator.refusalEvent builds it).
func (l loopView) refusal(id task.ID, sessionID string, reason task.Reason, detail string) task.Event {
	text := reason.Sentence()
	if detail != "" {
		text += " " + detail
	}
	ev := l.event(id, sessionID, task.EvRefusal, text)
	ev.Reason = reason
	return ev
}

// refusalFrom turns an error into a refusal event, keeping its reason
// when it carries one.
func (l loopView) refusalFrom(id task.ID, err error) task.Event {
	var ref *task.Refusal
	if errors.As(err, &ref) {
		return l.refusal(id, "", ref.Reason, ref.Detail)
	}
	return l.refusal(id, "", task.ReasonMergeRefused, err.Error())
}

// tasksView is what a service that moves tasks sees of the loop's task
// map; every call is on the loop.
type tasksView struct {
	// get is the loop's copy of a task (the zero task for none).
	get func(task.ID) task.Task
	// ids are the tasks in creation order.
	ids func() []task.ID
	// move applies action a to the task under token (0: unfenced) through
	// task.Apply in the store's transaction, with edit and ev; it reports
	// whether the task moved.
	move func(ctx context.Context, id task.ID, token int64, a task.Action, edit func(*task.Task), ev task.Event) bool
}

// tasksOf returns the view of the task map the coordinator's services
// hold.
func tasksOf(c *Coordinator) tasksView {
	return tasksView{
		get:  func(id task.ID) task.Task { return c.tasks[id] },
		ids:  c.ids,
		move: c.life.move,
	}
}
