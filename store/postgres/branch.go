package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// liveBranchIndex is the partial unique index of migration 5.
const liveBranchIndex = "tasks_live_branch"

// branchTaken turns a violation of the live-branch index on a write of t
// into a *store.BranchTakenError; any other error is returned as it is.
// The transaction is aborted by then, so holder names the task that holds
// the branch once write has rolled back.
func branchTaken(t task.Task, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == liveBranchIndex {
		return &store.BranchTakenError{Branch: t.Branch}
	}
	return err
}

// holder fills in the task that holds the branch of a refused write, read
// after its transaction rolled back.
func (s *Store) holder(ctx context.Context, err error) error {
	var bt *store.BranchTakenError
	if !errors.As(err, &bt) || bt.Holder != "" {
		return err
	}
	var id string
	if s.pool.QueryRow(context.WithoutCancel(ctx), `SELECT id FROM tasks WHERE branch = $1
AND state NOT IN ('completed', 'failed', 'cancelled', 'merged') LIMIT 1`, bt.Branch).Scan(&id) == nil {
		bt.Holder = task.ID(id)
	}
	return err
}
