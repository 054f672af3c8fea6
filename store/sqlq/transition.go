package sqlq

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TaskTransition reads the task, applies the transition store.Plan decides
// and writes it with its events and lease change, in one transaction. The
// task row is locked where the dialect locks rows.
func (o Transitions) TaskTransition(ctx context.Context, p store.TaskTransitionParams) (store.TaskTransitionResult, error) {
	var res store.TaskTransitionResult
	err := o.D.Write(ctx, func(tx Tx) error {
		var token int64
		before, err := ScanTask(tx.QueryRow(ctx, `SELECT `+TaskColumns+`, token FROM tasks WHERE id = ?`+tx.Dialect().forUpdate(),
			string(p.TaskID)), &token)
		if err != nil {
			return notFound(err, "read", "task "+string(p.TaskID))
		}
		res, err = transition(ctx, tx, p, before, token)
		return err
	})
	return res, err
}

// transition plans p on the task read inside tx and writes the plan.
func transition(ctx context.Context, tx Tx, p store.TaskTransitionParams, before task.Task, token int64) (store.TaskTransitionResult, error) {
	var leaseToken int64
	err := tx.QueryRow(ctx, `SELECT token FROM leases WHERE task_id = ?`, string(before.ID)).Scan(&leaseToken)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return store.TaskTransitionResult{}, fmt.Errorf("read lease of task %s: %w", before.ID, err)
	}
	plan, err := p.Plan(before, token, leaseToken)
	if err != nil {
		return store.TaskTransitionResult{}, err
	}
	t := plan.Task
	// The harness, model and signature change together (a handoff to
	// another harness signs the task again in its edit); the rest of the
	// task's operator text never changes in a transition.
	_, err = tx.Exec(ctx, `UPDATE tasks SET state = ?, phase = ?, attempt = ?, base_commit = ?,
branch = ?, reason = ?, updated_at = ?, token = ?, harness = ?, model = ?, signature = ? WHERE id = ?`,
		string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
		tx.Dialect().Time(t.UpdatedAt), plan.Token, t.Harness, t.Model, t.Signature, string(t.ID))
	if err != nil {
		return store.TaskTransitionResult{}, tx.BranchTaken(ctx, t, fmt.Errorf("%s task %s: %w", p.Action, t.ID, err))
	}
	if plan.Upsert != nil {
		if err := upsertLease(ctx, tx, *plan.Upsert); err != nil {
			return store.TaskTransitionResult{}, err
		}
	}
	if plan.Release {
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE task_id = ?`, string(t.ID)); err != nil {
			return store.TaskTransitionResult{}, fmt.Errorf("release lease of task %s: %w", t.ID, err)
		}
	}
	if err := tx.AppendEvents(ctx, plan.Events); err != nil {
		return store.TaskTransitionResult{}, err
	}
	if plan.EndLive != nil {
		if err := endLiveSessions(ctx, tx, t.ID, *plan.EndLive); err != nil {
			return store.TaskTransitionResult{}, err
		}
	}
	return plan.Result(before), nil
}
