package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// VerdictInsert stores one verify run and its events.
func (s *Store) VerdictInsert(ctx context.Context, v store.VerdictRecord, events ...task.Event) error {
	verdict := v.Verdict
	verdict.At = verdict.At.UTC()
	body, err := json.Marshal(verdict)
	if err != nil {
		return fmt.Errorf("insert verdict for task %s: %w", v.TaskID, err)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		if v.Token != 0 {
			if err := fence(ctx, tx, "record a verdict", v.TaskID, v.Token); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO verdicts (task_id, session_id, phase, status, verdict, at)
VALUES (?, ?, ?, ?, ?, ?)`, string(v.TaskID), v.SessionID, string(v.Phase), string(verdict.Status),
			string(body), timeText(verdict.At))
		if err != nil {
			return fmt.Errorf("insert verdict for task %s: %w", v.TaskID, err)
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// VerdictList returns a task's verify runs in the order they were stored.
func (s *Store) VerdictList(ctx context.Context, taskID task.ID) ([]store.VerdictRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT task_id, session_id, phase, verdict FROM verdicts
WHERE task_id = ? ORDER BY id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list verdicts of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.VerdictRecord
	for rows.Next() {
		var v store.VerdictRecord
		var tid, phase, body string
		if err := rows.Scan(&tid, &v.SessionID, &phase, &body); err != nil {
			return nil, fmt.Errorf("list verdicts of task %s: %w", taskID, err)
		}
		v.TaskID, v.Phase = task.ID(tid), task.Phase(phase)
		if err := json.Unmarshal([]byte(body), &v.Verdict); err != nil {
			return nil, fmt.Errorf("list verdicts of task %s: %w", taskID, err)
		}
		v.Verdict.At = v.Verdict.At.UTC()
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list verdicts of task %s: %w", taskID, err)
	}
	return out, nil
}

// DeadEndInsert stores an approach that failed, and its events.
func (s *Store) DeadEndInsert(ctx context.Context, d store.DeadEnd, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := insertDeadEnd(ctx, tx, d); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// insertDeadEnd writes a dead-end row inside tx.
func insertDeadEnd(ctx context.Context, tx *sql.Tx, d store.DeadEnd) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO dead_ends (task_id, phase, attempt, text, at) VALUES (?, ?, ?, ?, ?)`,
		string(d.TaskID), string(d.Phase), d.Attempt, d.Text, timeText(d.At))
	if err != nil {
		return fmt.Errorf("insert dead end for task %s: %w", d.TaskID, err)
	}
	return nil
}

// DeadEndList returns a task's dead ends in the order they were stored.
func (s *Store) DeadEndList(ctx context.Context, taskID task.ID) ([]store.DeadEnd, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT task_id, phase, attempt, text, at FROM dead_ends
WHERE task_id = ? ORDER BY id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list dead ends of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.DeadEnd
	for rows.Next() {
		var d store.DeadEnd
		var tid, phase, at string
		if err := rows.Scan(&tid, &phase, &d.Attempt, &d.Text, &at); err != nil {
			return nil, fmt.Errorf("list dead ends of task %s: %w", taskID, err)
		}
		d.TaskID, d.Phase = task.ID(tid), task.Phase(phase)
		if d.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list dead ends of task %s: %w", taskID, err)
	}
	return out, nil
}
