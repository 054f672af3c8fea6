package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// branchTaken turns a violation of the live-branch index (migration 9) on
// a write of t into a *store.BranchTakenError naming the task that holds
// the branch; any other error is returned as it is. SQLite rolls back only
// the failed statement, so tx can still read the holder.
func branchTaken(ctx context.Context, tx *sql.Tx, t task.Task, err error) error {
	if err == nil || !strings.Contains(err.Error(), "tasks.branch") {
		return err
	}
	var holder string
	_ = tx.QueryRowContext(ctx, `SELECT id FROM tasks WHERE branch = ? AND id <> ?
AND state NOT IN ('completed', 'failed', 'cancelled', 'merged') LIMIT 1`, t.Branch, string(t.ID)).Scan(&holder)
	return &store.BranchTakenError{Branch: t.Branch, Holder: task.ID(holder)}
}
