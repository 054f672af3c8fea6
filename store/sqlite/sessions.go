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

const sessionColumns = `id, task_id, phase, attempt, harness, model, token, holder, status, exit_code,
cast_path, brief, fingerprint, continuity, started_at, ended_at`

// SessionInsert stores a newly launched session and its events.
func (s *Store) SessionInsert(ctx context.Context, ss store.Session, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if ss.Fence != 0 {
			if err := sqlq.Fence(ctx, txq{s, tx}, "record session "+ss.ID, ss.TaskID, ss.Fence); err != nil {
				return err
			}
		}
		if err := insertSession(ctx, tx, ss); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// insertSession writes a session row inside tx.
func insertSession(ctx context.Context, tx *sql.Tx, ss store.Session) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ss.ID, string(ss.TaskID), string(ss.Phase), ss.Attempt, ss.Harness, ss.Model, ss.Token, ss.Holder,
		string(ss.Status), ss.ExitCode, ss.CastPath, ss.Brief, ss.Fingerprint, ss.Continuity,
		timeText(ss.StartedAt), timeText(ss.EndedAt))
	if err != nil {
		return fmt.Errorf("insert session %s of task %s: %w", ss.ID, ss.TaskID, err)
	}
	return nil
}

// SessionUpdate rewrites every field of a stored session but its id and
// task, with its events; store.ErrNotFound when there is no such session.
func (s *Store) SessionUpdate(ctx context.Context, ss store.Session, events ...task.Event) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if ss.Fence != 0 {
			if err := sqlq.FenceGrant(ctx, txq{s, tx}, "update session "+ss.ID, ss.TaskID, ss.Fence); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET phase = ?, attempt = ?, harness = ?, model = ?,
token = ?, holder = ?, status = ?, exit_code = ?, cast_path = ?, brief = ?, fingerprint = ?, continuity = ?,
started_at = ?, ended_at = ? WHERE id = ?`,
			string(ss.Phase), ss.Attempt, ss.Harness, ss.Model, ss.Token, ss.Holder, string(ss.Status),
			ss.ExitCode, ss.CastPath, ss.Brief, ss.Fingerprint, ss.Continuity,
			timeText(ss.StartedAt), timeText(ss.EndedAt), ss.ID)
		if err != nil {
			return fmt.Errorf("update session %s: %w", ss.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("update session %s: %w", ss.ID, err)
		} else if n == 0 {
			return fmt.Errorf("session %s: %w", ss.ID, store.ErrNotFound)
		}
		return s.appendEvents(ctx, tx, events)
	})
}

// SessionGet returns one session, or store.ErrNotFound.
func (s *Store) SessionGet(ctx context.Context, id string) (store.Session, error) {
	ss, err := scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("get session %s: %w", id, err)
	}
	return ss, nil
}

// SessionList returns a task's sessions in launch order.
func (s *Store) SessionList(ctx context.Context, taskID task.ID) ([]store.Session, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions
WHERE task_id = ? ORDER BY started_at, id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list sessions of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions of task %s: %w", taskID, err)
		}
		out = append(out, ss)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions of task %s: %w", taskID, err)
	}
	return out, nil
}

// SessionListLive returns every session still recorded as launching or
// confirmed, in launch order, through a partial index that holds only those.
func (s *Store) SessionListLive(ctx context.Context) ([]store.Session, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions
WHERE status IN ('launching', 'confirmed') ORDER BY started_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list live sessions: %w", err)
	}
	defer rows.Close()
	var out []store.Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list live sessions: %w", err)
		}
		out = append(out, ss)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list live sessions: %w", err)
	}
	return out, nil
}

// endLiveSessions ends the live sessions of task id inside tx (a
// transition's EndLive).
func endLiveSessions(ctx context.Context, tx *sql.Tx, id task.ID, e store.SessionsEnd) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions
WHERE task_id = ? AND status IN ('launching', 'confirmed')`, string(id))
	if err != nil {
		return fmt.Errorf("list live sessions of task %s: %w", id, err)
	}
	var live []store.Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("list live sessions of task %s: %w", id, err)
		}
		live = append(live, ss)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list live sessions of task %s: %w", id, err)
	}
	for _, ss := range live {
		ss = e.End(ss)
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET status = ?, ended_at = ?, continuity = ? WHERE id = ?`,
			string(ss.Status), timeText(ss.EndedAt), ss.Continuity, ss.ID); err != nil {
			return fmt.Errorf("end session %s: %w", ss.ID, err)
		}
	}
	return nil
}

func scanSession(sc scanner) (store.Session, error) {
	var (
		ss                                store.Session
		taskID, phase, status, start, end string
	)
	err := sc.Scan(&ss.ID, &taskID, &phase, &ss.Attempt, &ss.Harness, &ss.Model, &ss.Token, &ss.Holder, &status,
		&ss.ExitCode, &ss.CastPath, &ss.Brief, &ss.Fingerprint, &ss.Continuity, &start, &end)
	if err != nil {
		return ss, err
	}
	ss.TaskID, ss.Phase, ss.Status = task.ID(taskID), task.Phase(phase), store.SessionStatus(status)
	if ss.StartedAt, err = parseTime(start); err != nil {
		return ss, err
	}
	if ss.EndedAt, err = parseTime(end); err != nil {
		return ss, err
	}
	return ss, nil
}
