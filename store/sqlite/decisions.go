package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// DecisionInsert stores a human correction and its events.
func (s *Store) DecisionInsert(ctx context.Context, d store.Decision, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := insertDecision(ctx, tx, d); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// insertDecision writes a decision row inside tx.
func insertDecision(ctx context.Context, tx *sql.Tx, d store.Decision) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO decisions (id, task_id, text, author, at) VALUES (?, ?, ?, ?, ?)`,
		d.ID, string(d.TaskID), d.Text, d.Author, timeText(d.At))
	if err != nil {
		return fmt.Errorf("insert decision %s for task %s: %w", d.ID, d.TaskID, err)
	}
	return nil
}

// DecisionList returns a task's decisions, oldest first.
func (s *Store) DecisionList(ctx context.Context, taskID task.ID) ([]store.Decision, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, task_id, text, author, at FROM decisions
WHERE task_id = ? ORDER BY at, id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list decisions of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.Decision
	for rows.Next() {
		var d store.Decision
		var tid, at string
		if err := rows.Scan(&d.ID, &tid, &d.Text, &d.Author, &at); err != nil {
			return nil, fmt.Errorf("list decisions of task %s: %w", taskID, err)
		}
		d.TaskID = task.ID(tid)
		if d.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list decisions of task %s: %w", taskID, err)
	}
	return out, nil
}

// DeliveryInsert records that a decision reached a session, with its events.
// It reports false and writes nothing when that delivery is already stored,
// so a retried delivery never types the correction twice into the ledger.
func (s *Store) DeliveryInsert(ctx context.Context, d store.Delivery, events ...task.Event) (bool, error) {
	inserted := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO deliveries (decision_id, session_id, at) VALUES (?, ?, ?)
ON CONFLICT (decision_id, session_id) DO NOTHING`, d.DecisionID, d.SessionID, timeText(d.At))
		if err != nil {
			return fmt.Errorf("insert delivery of decision %s to session %s: %w", d.DecisionID, d.SessionID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("insert delivery of decision %s to session %s: %w", d.DecisionID, d.SessionID, err)
		}
		if n == 0 {
			return nil
		}
		inserted = true
		return s.appendEvents(ctx, tx, events)
	})
	if err != nil {
		return false, err
	}
	return inserted, nil
}

// DeliveryList returns the deliveries of a task's decisions, oldest first.
func (s *Store) DeliveryList(ctx context.Context, taskID task.ID) ([]store.Delivery, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT dl.decision_id, dl.session_id, dl.at
FROM deliveries dl JOIN decisions d ON d.id = dl.decision_id
WHERE d.task_id = ? ORDER BY dl.at, dl.decision_id, dl.session_id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list deliveries of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.Delivery
	for rows.Next() {
		var d store.Delivery
		var at string
		if err := rows.Scan(&d.DecisionID, &d.SessionID, &at); err != nil {
			return nil, fmt.Errorf("list deliveries of task %s: %w", taskID, err)
		}
		if d.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list deliveries of task %s: %w", taskID, err)
	}
	return out, nil
}
