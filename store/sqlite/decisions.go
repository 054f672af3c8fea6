package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

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
	anchor, err := anchorJSON(d.Anchor)
	if err != nil {
		return err
	}
	resolved := ""
	if !d.ResolvedAt.IsZero() {
		resolved = timeText(d.ResolvedAt)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO decisions (id, task_id, text, author, at, anchor, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		d.ID, string(d.TaskID), d.Text, d.Author, timeText(d.At), anchor, resolved)
	if err != nil {
		return fmt.Errorf("insert decision %s for task %s: %w", d.ID, d.TaskID, err)
	}
	return nil
}

// DecisionList returns a task's decisions, oldest first.
func (s *Store) DecisionList(ctx context.Context, taskID task.ID) ([]store.Decision, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, task_id, text, author, at, anchor, resolved_at FROM decisions
WHERE task_id = ? ORDER BY at, id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list decisions of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.Decision
	for rows.Next() {
		var d store.Decision
		var tid, at, resolved string
		var anchor sql.NullString
		if err := rows.Scan(&d.ID, &tid, &d.Text, &d.Author, &at, &anchor, &resolved); err != nil {
			return nil, fmt.Errorf("list decisions of task %s: %w", taskID, err)
		}
		d.TaskID = task.ID(tid)
		if d.At, err = parseTime(at); err != nil {
			return nil, err
		}
		if resolved != "" {
			if d.ResolvedAt, err = parseTime(resolved); err != nil {
				return nil, err
			}
		}
		if d.Anchor, err = store.ParseAnchor(anchor.String); err != nil {
			return nil, fmt.Errorf("list decisions of task %s: decision %s: %w", taskID, d.ID, err)
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

// DecisionResolve marks a decision resolved, with its events.
func (s *Store) DecisionResolve(ctx context.Context, taskID task.ID, id string, at time.Time, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE decisions SET resolved_at = ? WHERE id = ? AND task_id = ?`, timeText(at), id, string(taskID))
		if err != nil {
			return fmt.Errorf("resolve decision %s of task %s: %w", id, taskID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("resolve decision %s of task %s: %w", id, taskID, store.ErrNotFound)
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// anchorJSON is a decision's anchor as its column holds it: JSON, or NULL
// for a plain correction.
func anchorJSON(a *store.Anchor) (any, error) {
	if a == nil {
		return nil, nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode a comment's anchor: %w", err)
	}
	return string(b), nil
}
