package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TaskTransition reads the task, applies the transition store.Plan decides
// and writes it with its events and lease change, in one transaction.
func (s *Store) TaskTransition(ctx context.Context, p store.TaskTransitionParams) (store.TaskTransitionResult, error) {
	var res store.TaskTransitionResult
	err := s.write(ctx, func(tx pgx.Tx) error {
		var token int64
		before, err := scanTaskToken(tx.QueryRow(ctx, `SELECT `+taskColumns+`, token FROM tasks WHERE id = $1 FOR UPDATE`, string(p.TaskID)), &token)
		if err != nil {
			return notFound(err, "task "+string(p.TaskID))
		}
		res, err = transition(ctx, tx, p, before, token)
		return err
	})
	return res, err
}

// transition plans p on the task read inside tx and writes the plan.
func transition(ctx context.Context, tx pgx.Tx, p store.TaskTransitionParams, before task.Task, token int64) (store.TaskTransitionResult, error) {
	var leaseToken int64
	err := tx.QueryRow(ctx, `SELECT token FROM leases WHERE task_id = $1`, string(before.ID)).Scan(&leaseToken)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return store.TaskTransitionResult{}, fmt.Errorf("read lease of task %s: %w", before.ID, err)
	}
	plan, err := p.Plan(before, token, leaseToken)
	if err != nil {
		return store.TaskTransitionResult{}, err
	}
	t := plan.Task
	// The harness, model and signature change together (a handoff to
	// another harness signs the task again in its edit).
	_, err = tx.Exec(ctx, `UPDATE tasks SET state = $1, phase = $2, attempt = $3, base_commit = $4,
branch = $5, reason = $6, updated_at = $7, token = $8, harness = $9, model = $10, signature = $11 WHERE id = $12`,
		string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
		t.UpdatedAt.UTC(), plan.Token, t.Harness, t.Model, t.Signature, string(t.ID))
	if err != nil {
		return store.TaskTransitionResult{}, branchTaken(t, fmt.Errorf("%s task %s: %w", p.Action, t.ID, err))
	}
	if plan.Upsert != nil {
		if err := upsertLease(ctx, tx, *plan.Upsert); err != nil {
			return store.TaskTransitionResult{}, err
		}
	}
	if plan.Release {
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE task_id = $1`, string(t.ID)); err != nil {
			return store.TaskTransitionResult{}, fmt.Errorf("release lease of task %s: %w", t.ID, err)
		}
	}
	if err := appendEvents(ctx, tx, plan.Events); err != nil {
		return store.TaskTransitionResult{}, err
	}
	if p.EndLive != nil {
		if err := sqlq.EndLiveSessions(ctx, txq{tx}, t.ID, *p.EndLive); err != nil {
			return store.TaskTransitionResult{}, err
		}
	}
	return plan.Result(before), nil
}
