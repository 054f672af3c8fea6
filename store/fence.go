package store

import (
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Fencing. A lease token proves a writer holds a task only while it is the
// task's current token and the task's lease row still carries it: an
// orphaned task keeps its token until the next grant, but its lease row is
// gone, so the engine that lost it is refused from the moment of the
// takeover, not only from the next grant. Every write an engine makes on
// behalf of a task it runs carries its token (VerdictRecord.Token,
// Session.Fence, ArtifactSealParams.Token, EventAppendFenced) and the
// driver checks it, in the write's own transaction, with CheckFence.

// CheckFence is the rule every driver applies to a fenced write: token must
// be non-zero, the task's current token (current) and its lease row's
// (leaseToken, 0 when it has none). what names the write for the error.
func CheckFence(what string, id task.ID, token, current, leaseToken int64) error {
	switch {
	case token == 0:
		return fmt.Errorf("%s of task %s: no lease token: %w", what, id, ErrStaleToken)
	case token != current:
		return fmt.Errorf("%s of task %s: lease token %d is not the current %d: %w", what, id, token, current, ErrStaleToken)
	case leaseToken != token:
		return fmt.Errorf("%s of task %s: the lease of token %d was released: %w", what, id, token, ErrStaleToken)
	}
	return nil
}

// CheckGrant is the rule of a session row's update (Session.Fence): it is
// refused once the task was granted to a newer token, but not merely
// because the lease was released. The engine that ends its own session
// after its own cancel or park (which released the lease first) records
// the end; a rescue marks the lost engine's sessions before any newer
// session starts, and from the new grant on the lost engine can no longer
// rewrite them, so no recorded end ever overlaps the new holder's session.
func CheckGrant(what string, id task.ID, token, current int64) error {
	switch {
	case token == 0:
		return fmt.Errorf("%s of task %s: no lease token: %w", what, id, ErrStaleToken)
	case token != current:
		return fmt.Errorf("%s of task %s: lease token %d is not the current %d: %w", what, id, token, current, ErrStaleToken)
	}
	return nil
}

// FencedTask returns the one task events belong to, for EventAppendFenced:
// every event must name the same task.
func FencedTask(events []task.Event) (task.ID, error) {
	var id task.ID
	for _, e := range events {
		switch {
		case e.TaskID == "":
			return "", fmt.Errorf("append fenced events: event %s belongs to no task", e.Kind)
		case id != "" && e.TaskID != id:
			return "", fmt.Errorf("append fenced events: events of tasks %s and %s in one write", id, e.TaskID)
		}
		id = e.TaskID
	}
	return id, nil
}
