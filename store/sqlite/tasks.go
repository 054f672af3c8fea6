package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const taskColumns = insertColumns + `, signature`

// insertColumns are the columns of every schema version's tasks table; the
// signature (a later version's) is written after the row, only when set.
const insertColumns = `id, title, goal, acceptance, verify, repo, pipeline, harness, model, capabilities,
state, phase, attempt, base_commit, branch, reason, created_at, updated_at`

// TaskInsert stores a new task and its events in one transaction.
func (s *Store) TaskInsert(ctx context.Context, t task.Task, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := insertTask(ctx, tx, t); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// insertTask writes a new task row inside tx.
func insertTask(ctx context.Context, tx *sql.Tx, t task.Task) error {
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
	_, err = tx.ExecContext(ctx, `INSERT INTO tasks (`+insertColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(t.ID), t.Title, t.Goal, acceptance, t.Verify, t.Repo, pipeline, t.Harness, t.Model, caps,
		string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
		timeText(t.CreatedAt), timeText(t.UpdatedAt))
	if err != nil {
		return branchTaken(ctx, tx, t, fmt.Errorf("insert task %s: %w", t.ID, err))
	}
	if t.Signature != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET signature = ? WHERE id = ?`, t.Signature, string(t.ID)); err != nil {
			return fmt.Errorf("insert task %s: its signature: %w", t.ID, err)
		}
	}
	return nil
}

// TaskGet returns the task with id, or store.ErrNotFound.
func (s *Store) TaskGet(ctx context.Context, id task.ID) (task.Task, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, string(id))
	t, err := scanTask(row)
	if errors.Is(err, sql.ErrNoRows) {
		return task.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	return t, nil
}

// TaskList returns the tasks in the given states (all when none is given),
// oldest first.
func (s *Store) TaskList(ctx context.Context, p store.TaskListParams) ([]task.Task, error) {
	q := `SELECT ` + taskColumns + ` FROM tasks`
	var args []any
	if len(p.States) > 0 {
		q += ` WHERE state IN (?` + strings.Repeat(", ?", len(p.States)-1) + `)`
		for _, st := range p.States {
			args = append(args, string(st))
		}
	}
	q += ` ORDER BY created_at, id`
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	var out []task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// TaskUpdate writes the coordinator-owned fields of p.Task and appends
// p.Events, only if the stored task is in p.ExpectState and, when
// p.ExpectToken is non-zero, holds that lease token.
func (s *Store) TaskUpdate(ctx context.Context, p store.TaskUpdateParams) error {
	t := p.Task
	return s.write(ctx, func(tx *sql.Tx) error {
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
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET state = ?, phase = ?, attempt = ?, base_commit = ?,
branch = ?, reason = ?, updated_at = ? WHERE id = ?`,
			string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
			timeText(t.UpdatedAt), string(t.ID))
		if err != nil {
			return branchTaken(ctx, tx, t, fmt.Errorf("update task %s: %w", t.ID, err))
		}
		return s.appendEvents(ctx, tx, p.Events)
	})
}

// TaskToken returns the task's current lease token, 0 before any grant.
func (s *Store) TaskToken(ctx context.Context, id task.ID) (int64, error) {
	var token int64
	err := s.r.QueryRowContext(ctx, `SELECT token FROM tasks WHERE id = ?`, string(id)).Scan(&token)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("get token of task %s: %w", id, err)
	}
	return token, nil
}

// taskGuard reads the state and token a guarded write checks, inside its
// transaction.
func taskGuard(ctx context.Context, tx *sql.Tx, id task.ID) (task.State, int64, error) {
	var state string
	var token int64
	err := tx.QueryRowContext(ctx, `SELECT state, token FROM tasks WHERE id = ?`, string(id)).Scan(&state, &token)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return "", 0, fmt.Errorf("read task %s: %w", id, err)
	}
	return task.State(state), token, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanTask(sc scanner) (task.Task, error) { return scanTaskToken(sc, nil) }

// scanTaskToken scans the task columns followed, when token is not nil, by
// the task's lease token.
func scanTaskToken(sc scanner, token *int64) (task.Task, error) {
	var (
		t                          task.Task
		id, state, phase           string
		acceptance, pipeline, caps string
		createdAt, updatedAt       string
	)
	dest := []any{&id, &t.Title, &t.Goal, &acceptance, &t.Verify, &t.Repo, &pipeline, &t.Harness, &t.Model, &caps,
		&state, &phase, &t.Attempt, &t.BaseCommit, &t.Branch, &t.Reason, &createdAt, &updatedAt, &t.Signature}
	if token != nil {
		dest = append(dest, token)
	}
	err := sc.Scan(dest...)
	if err != nil {
		return t, err
	}
	t.ID, t.State, t.Phase = task.ID(id), task.State(state), task.Phase(phase)
	if err := stringsJSON(acceptance, &t.Acceptance); err != nil {
		return t, fmt.Errorf("task %s acceptance: %w", id, err)
	}
	if err := stringsJSON(pipeline, &t.Pipeline); err != nil {
		return t, fmt.Errorf("task %s pipeline: %w", id, err)
	}
	if err := stringsJSON(caps, &t.Capabilities); err != nil {
		return t, fmt.Errorf("task %s capabilities: %w", id, err)
	}
	if t.CreatedAt, err = parseTime(createdAt); err != nil {
		return t, err
	}
	if t.UpdatedAt, err = parseTime(updatedAt); err != nil {
		return t, err
	}
	return t, nil
}
