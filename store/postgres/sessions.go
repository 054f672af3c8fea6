package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const sessionColumns = `id, task_id, phase, attempt, harness, model, token, holder, status, exit_code,
cast_path, brief, fingerprint, continuity, started_at, ended_at`

// SessionInsert stores a newly launched session and its events.
func (s *Store) SessionInsert(ctx context.Context, ss store.Session, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if ss.Fence != 0 {
			if err := sqlq.Fence(ctx, txq{tx}, "record session "+ss.ID, ss.TaskID, ss.Fence); err != nil {
				return err
			}
		}
		if err := insertSession(ctx, tx, ss); err != nil {
			return err
		}
		return appendEvents(ctx, tx, events)
	})
}

func insertSession(ctx context.Context, tx pgx.Tx, ss store.Session) error {
	_, err := tx.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		ss.ID, string(ss.TaskID), string(ss.Phase), ss.Attempt, ss.Harness, ss.Model, ss.Token, ss.Holder,
		string(ss.Status), ss.ExitCode, ss.CastPath, ss.Brief, ss.Fingerprint, ss.Continuity,
		ss.StartedAt.UTC(), ss.EndedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert session %s of task %s: %w", ss.ID, ss.TaskID, err)
	}
	return nil
}

// SessionUpdate rewrites every field of a stored session but its id and
// task, with its events; store.ErrNotFound when there is no such session.
func (s *Store) SessionUpdate(ctx context.Context, ss store.Session, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if ss.Fence != 0 {
			if err := sqlq.FenceGrant(ctx, txq{tx}, "update session "+ss.ID, ss.TaskID, ss.Fence); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE sessions SET phase = $1, attempt = $2, harness = $3, model = $4,
token = $5, holder = $6, status = $7, exit_code = $8, cast_path = $9, brief = $10, fingerprint = $11,
continuity = $12, started_at = $13, ended_at = $14 WHERE id = $15`,
			string(ss.Phase), ss.Attempt, ss.Harness, ss.Model, ss.Token, ss.Holder, string(ss.Status),
			ss.ExitCode, ss.CastPath, ss.Brief, ss.Fingerprint, ss.Continuity,
			ss.StartedAt.UTC(), ss.EndedAt.UTC(), ss.ID)
		if err != nil {
			return fmt.Errorf("update session %s: %w", ss.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("session %s: %w", ss.ID, store.ErrNotFound)
		}
		return appendEvents(ctx, tx, events)
	})
}

// SessionGet returns one session, or store.ErrNotFound.
func (s *Store) SessionGet(ctx context.Context, id string) (store.Session, error) {
	ss, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`, id))
	if err != nil {
		return store.Session{}, notFound(err, "session "+id)
	}
	return ss, nil
}

// SessionList returns a task's sessions in launch order.
func (s *Store) SessionList(ctx context.Context, taskID task.ID) ([]store.Session, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sessionColumns+` FROM sessions
WHERE task_id = $1 ORDER BY started_at, id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list sessions of task %s: %w", taskID, err)
	}
	out, err := collect(rows, scanSession)
	if err != nil {
		return nil, fmt.Errorf("list sessions of task %s: %w", taskID, err)
	}
	return out, nil
}

// SessionListLive returns every session still recorded as launching or
// confirmed, in launch order.
func (s *Store) SessionListLive(ctx context.Context) ([]store.Session, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sessionColumns+` FROM sessions
WHERE status IN ('launching', 'confirmed') ORDER BY started_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list live sessions: %w", err)
	}
	out, err := collect(rows, scanSession)
	if err != nil {
		return nil, fmt.Errorf("list live sessions: %w", err)
	}
	return out, nil
}

// endLiveSessions ends the live sessions of task id inside tx (a
// transition's EndLive).
func endLiveSessions(ctx context.Context, tx pgx.Tx, id task.ID, e store.SessionsEnd) error {
	rows, err := tx.Query(ctx, `SELECT `+sessionColumns+` FROM sessions
WHERE task_id = $1 AND status IN ('launching', 'confirmed') FOR UPDATE`, string(id))
	if err != nil {
		return fmt.Errorf("list live sessions of task %s: %w", id, err)
	}
	live, err := collect(rows, scanSession)
	if err != nil {
		return fmt.Errorf("list live sessions of task %s: %w", id, err)
	}
	for _, ss := range live {
		ss = e.End(ss)
		if _, err := tx.Exec(ctx, `UPDATE sessions SET status = $1, ended_at = $2, continuity = $3 WHERE id = $4`,
			string(ss.Status), ss.EndedAt.UTC(), ss.Continuity, ss.ID); err != nil {
			return fmt.Errorf("end session %s: %w", ss.ID, err)
		}
	}
	return nil
}

func scanSession(row pgx.Row) (store.Session, error) {
	var (
		ss                    store.Session
		taskID, phase, status string
	)
	err := row.Scan(&ss.ID, &taskID, &phase, &ss.Attempt, &ss.Harness, &ss.Model, &ss.Token, &ss.Holder, &status,
		&ss.ExitCode, &ss.CastPath, &ss.Brief, &ss.Fingerprint, &ss.Continuity, &ss.StartedAt, &ss.EndedAt)
	ss.TaskID, ss.Phase, ss.Status = task.ID(taskID), task.Phase(phase), store.SessionStatus(status)
	ss.StartedAt, ss.EndedAt = ss.StartedAt.UTC(), ss.EndedAt.UTC()
	return ss, err
}
