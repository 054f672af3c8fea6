package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TaskStatusList returns every task's status line, oldest first, with the
// latest verdict read over the per-task index.
func (s *Store) TaskStatusList(ctx context.Context) ([]store.TaskStatus, error) {
	rows, err := s.pool.Query(ctx, `SELECT t.id, t.title, t.state, t.phase, t.attempt, t.reason,
	(SELECT v.verdict FROM verdicts v WHERE v.task_id = t.id ORDER BY v.id DESC LIMIT 1)
FROM tasks t ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list task status: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.TaskStatus, error) {
		var (
			ts               store.TaskStatus
			id, state, phase string
			verdict          *string
		)
		if err := row.Scan(&id, &ts.Title, &state, &phase, &ts.Attempt, &ts.Reason, &verdict); err != nil {
			return ts, err
		}
		ts.ID, ts.State, ts.Phase = task.ID(id), task.State(state), task.Phase(phase)
		if verdict != nil {
			var v task.Verdict
			if err := json.Unmarshal([]byte(*verdict), &v); err != nil {
				return ts, fmt.Errorf("verdict of %s: %w", ts.ID, err)
			}
			// The status line shows the status and the counts only.
			ts.Verdict = &task.Verdict{Status: v.Status, Passed: v.Passed, Failed: v.Failed,
				Skipped: v.Skipped, Counted: v.Counted, Detail: v.Detail}
		}
		return ts, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list task status: %w", err)
	}
	return out, nil
}
