package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const taskColumns = `id, title, goal, acceptance, verify, repo, pipeline, harness, model, capabilities,
state, phase, attempt, base_commit, branch, reason, created_at, updated_at, signature`

// TaskInsert stores a new task and its events in one transaction.
func (s *Store) TaskInsert(ctx context.Context, t task.Task, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := insertTask(ctx, tx, t); err != nil {
			return err
		}
		return appendEvents(ctx, tx, events)
	})
}

func insertTask(ctx context.Context, tx pgx.Tx, t task.Task) error {
	acceptance, err := jsonText(t.Acceptance)
	if err != nil {
		return fmt.Errorf("insert task %s: %w", t.ID, err)
	}
	pipeline, err := jsonText(t.Pipeline)
	if err != nil {
		return fmt.Errorf("insert task %s: %w", t.ID, err)
	}
	caps, err := jsonText(t.Capabilities)
	if err != nil {
		return fmt.Errorf("insert task %s: %w", t.ID, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO tasks (`+taskColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		string(t.ID), t.Title, t.Goal, acceptance, t.Verify, t.Repo, pipeline, t.Harness, t.Model, caps,
		string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
		t.CreatedAt.UTC(), t.UpdatedAt.UTC(), t.Signature)
	if err != nil {
		return branchTaken(t, fmt.Errorf("insert task %s: %w", t.ID, err))
	}
	return nil
}

// TaskGet returns the task with id, or store.ErrNotFound.
func (s *Store) TaskGet(ctx context.Context, id task.ID) (task.Task, error) {
	t, err := scanTask(s.pool.QueryRow(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = $1`, string(id)))
	if err != nil {
		return task.Task{}, notFound(err, "task "+string(id))
	}
	return t, nil
}

// TaskList returns the tasks in the given states (all when none is given),
// oldest first.
func (s *Store) TaskList(ctx context.Context, p store.TaskListParams) ([]task.Task, error) {
	q := `SELECT ` + taskColumns + ` FROM tasks`
	var args []any
	if len(p.States) > 0 {
		states := make([]string, len(p.States))
		for i, st := range p.States {
			states[i] = string(st)
		}
		q += ` WHERE state = ANY($1)`
		args = append(args, states)
	}
	q += ` ORDER BY created_at, id`
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out, err := collect(rows, scanTask)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// TaskUpdate writes the coordinator-owned fields of p.Task and appends
// p.Events, only if the stored task is in p.ExpectState and, when
// p.ExpectToken is non-zero, holds that lease token.
func (s *Store) TaskUpdate(ctx context.Context, p store.TaskUpdateParams) error {
	t := p.Task
	return s.write(ctx, func(tx pgx.Tx) error {
		state, token, err := taskGuard(ctx, tx, t.ID)
		if err != nil {
			return err
		}
		if state != p.ExpectState {
			return fmt.Errorf("update task %s: expected it %s but it is %s: %w", t.ID, p.ExpectState, state, store.ErrConflict)
		}
		if p.ExpectToken != 0 && token != p.ExpectToken {
			return fmt.Errorf("update task %s: lease token %d is not the current %d: %w", t.ID, p.ExpectToken, token, store.ErrStaleToken)
		}
		_, err = tx.Exec(ctx, `UPDATE tasks SET state = $1, phase = $2, attempt = $3, base_commit = $4,
branch = $5, reason = $6, updated_at = $7 WHERE id = $8`,
			string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
			t.UpdatedAt.UTC(), string(t.ID))
		if err != nil {
			return branchTaken(t, fmt.Errorf("update task %s: %w", t.ID, err))
		}
		return appendEvents(ctx, tx, p.Events)
	})
}

// TaskToken returns the task's current lease token, 0 before any grant.
func (s *Store) TaskToken(ctx context.Context, id task.ID) (int64, error) {
	var token int64
	err := s.pool.QueryRow(ctx, `SELECT token FROM tasks WHERE id = $1`, string(id)).Scan(&token)
	if err != nil {
		return 0, notFound(err, "task "+string(id))
	}
	return token, nil
}

// taskGuard reads the state and token a guarded write checks, inside its
// transaction (which holds the write lock, so they cannot change under it).
func taskGuard(ctx context.Context, tx pgx.Tx, id task.ID) (task.State, int64, error) {
	var state string
	var token int64
	err := tx.QueryRow(ctx, `SELECT state, token FROM tasks WHERE id = $1`, string(id)).Scan(&state, &token)
	if err != nil {
		return "", 0, notFound(err, "task "+string(id))
	}
	return task.State(state), token, nil
}

func scanTask(row pgx.Row) (task.Task, error) { return scanTaskToken(row, nil) }

// scanTaskToken scans the task columns followed, when token is not nil, by
// the task's lease token.
func scanTaskToken(row pgx.Row, token *int64) (task.Task, error) {
	var (
		t                          task.Task
		id, state, phase           string
		acceptance, pipeline, caps string
	)
	dest := []any{&id, &t.Title, &t.Goal, &acceptance, &t.Verify, &t.Repo, &pipeline, &t.Harness, &t.Model, &caps,
		&state, &phase, &t.Attempt, &t.BaseCommit, &t.Branch, &t.Reason, &t.CreatedAt, &t.UpdatedAt, &t.Signature}
	if token != nil {
		dest = append(dest, token)
	}
	err := row.Scan(dest...)
	if err != nil {
		return t, err
	}
	t.ID, t.State, t.Phase = task.ID(id), task.State(state), task.Phase(phase)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	if err := json.Unmarshal([]byte(acceptance), &t.Acceptance); err != nil {
		return t, fmt.Errorf("task %s acceptance: %w", id, err)
	}
	if err := json.Unmarshal([]byte(pipeline), &t.Pipeline); err != nil {
		return t, fmt.Errorf("task %s pipeline: %w", id, err)
	}
	if err := json.Unmarshal([]byte(caps), &t.Capabilities); err != nil {
		return t, fmt.Errorf("task %s capabilities: %w", id, err)
	}
	return t, nil
}

// jsonText renders v for a JSON column.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// collect scans every row with scan and closes rows.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
