package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TaskTransition reads the task, applies the transition store.Plan decides
// and writes it with its events and lease change, in one transaction.
func (s *Store) TaskTransition(ctx context.Context, p store.TaskTransitionParams) (store.TaskTransitionResult, error) {
	var res store.TaskTransitionResult
	err := s.write(ctx, func(tx *sql.Tx) error {
		var token int64
		before, err := scanTaskToken(tx.QueryRowContext(ctx, `SELECT `+taskColumns+`, token FROM tasks WHERE id = ?`, string(p.TaskID)), &token)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", p.TaskID, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read task %s: %w", p.TaskID, err)
		}
		res, err = s.transition(ctx, tx, p, before, token)
		return err
	})
	return res, err
}

// transition plans p on the task read inside tx and writes the plan.
func (s *Store) transition(ctx context.Context, tx *sql.Tx, p store.TaskTransitionParams, before task.Task, token int64) (store.TaskTransitionResult, error) {
	var leaseToken int64
	err := tx.QueryRowContext(ctx, `SELECT token FROM leases WHERE task_id = ?`, string(before.ID)).Scan(&leaseToken)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
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
	_, err = tx.ExecContext(ctx, `UPDATE tasks SET state = ?, phase = ?, attempt = ?, base_commit = ?,
branch = ?, reason = ?, updated_at = ?, token = ?, harness = ?, model = ?, signature = ? WHERE id = ?`,
		string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
		timeText(t.UpdatedAt), plan.Token, t.Harness, t.Model, t.Signature, string(t.ID))
	if err != nil {
		return store.TaskTransitionResult{}, branchTaken(ctx, tx, t, fmt.Errorf("%s task %s: %w", p.Action, t.ID, err))
	}
	if plan.Upsert != nil {
		if err := upsertLease(ctx, tx, *plan.Upsert); err != nil {
			return store.TaskTransitionResult{}, err
		}
	}
	if plan.Release {
		if _, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE task_id = ?`, string(t.ID)); err != nil {
			return store.TaskTransitionResult{}, fmt.Errorf("release lease of task %s: %w", t.ID, err)
		}
	}
	if err := s.appendEvents(ctx, tx, plan.Events); err != nil {
		return store.TaskTransitionResult{}, err
	}
	if p.EndLive != nil {
		if err := sqlq.EndLiveSessions(ctx, txq{s, tx}, t.ID, *p.EndLive); err != nil {
			return store.TaskTransitionResult{}, err
		}
	}
	return plan.Result(before), nil
}
