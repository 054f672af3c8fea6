package sqlq

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Sessions is the session operations both drivers run the same way. A
// driver's Store embeds it next to Ops, on the same Driver.
type Sessions struct {
	D Driver
}

const sessionColumns = `id, task_id, phase, attempt, harness, model, token, holder, status, exit_code,
cast_path, brief, fingerprint, continuity, started_at, ended_at`

// SessionInsert stores a newly launched session and its events.
func (o Sessions) SessionInsert(ctx context.Context, ss store.Session, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		if ss.Fence != 0 {
			if err := fence(ctx, tx, "record session "+ss.ID, ss.TaskID, ss.Fence); err != nil {
				return err
			}
		}
		return insertSession(ctx, tx, ss)
	})
}

// insertSession writes a session row inside tx.
func insertSession(ctx context.Context, tx Tx, ss store.Session) error {
	d := tx.Dialect()
	_, err := tx.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ss.ID, string(ss.TaskID), string(ss.Phase), ss.Attempt, ss.Harness, ss.Model, ss.Token, ss.Holder,
		string(ss.Status), ss.ExitCode, ss.CastPath, ss.Brief, ss.Fingerprint, ss.Continuity,
		d.Time(ss.StartedAt), d.Time(ss.EndedAt))
	if err != nil {
		return fmt.Errorf("insert session %s of task %s: %w", ss.ID, ss.TaskID, err)
	}
	return nil
}

// SessionUpdate rewrites every field of a stored session but its id and
// task, with its events; store.ErrNotFound when there is no such session.
// A session's end is final: an update that would make an ended session
// live again (a held confirm, or a brief's write read before a requeue
// ended the session) keeps its status and end, so no session of a task is
// live again once its task was queued for a newer grant.
func (o Sessions) SessionUpdate(ctx context.Context, ss store.Session, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		if ss.Fence != 0 {
			if err := fenceGrant(ctx, tx, "update session "+ss.ID, ss.TaskID, ss.Fence); err != nil {
				return err
			}
		}
		d := tx.Dialect()
		revive := `status IN ('exited', 'killed') AND ? IN ('launching', 'confirmed')`
		n, err := tx.Exec(ctx, `UPDATE sessions SET phase = ?, attempt = ?, harness = ?, model = ?,
token = ?, holder = ?, status = CASE WHEN `+revive+` THEN status ELSE ? END, exit_code = ?, cast_path = ?,
brief = ?, fingerprint = ?, continuity = ?, started_at = ?,
ended_at = CASE WHEN `+revive+` THEN ended_at ELSE ? END WHERE id = ?`,
			string(ss.Phase), ss.Attempt, ss.Harness, ss.Model, ss.Token, ss.Holder, string(ss.Status), string(ss.Status),
			ss.ExitCode, ss.CastPath, ss.Brief, ss.Fingerprint, ss.Continuity,
			d.Time(ss.StartedAt), string(ss.Status), d.Time(ss.EndedAt), ss.ID)
		if err != nil {
			return fmt.Errorf("update session %s: %w", ss.ID, err)
		}
		if n == 0 {
			return fmt.Errorf("session %s: %w", ss.ID, store.ErrNotFound)
		}
		return nil
	})
}

// SessionGet returns one session, or store.ErrNotFound.
func (o Sessions) SessionGet(ctx context.Context, id string) (store.Session, error) {
	return get(ctx, o.D.Reads(), "session "+id, scanSession, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id)
}

// SessionList returns a task's sessions in launch order.
func (o Sessions) SessionList(ctx context.Context, taskID task.ID) ([]store.Session, error) {
	return list(ctx, o.D.Reads(), "sessions of task "+string(taskID), scanSession, `SELECT `+sessionColumns+` FROM sessions
WHERE task_id = ? ORDER BY started_at, id`, string(taskID))
}

// SessionListLive returns every session still recorded as launching or
// confirmed, in launch order.
func (o Sessions) SessionListLive(ctx context.Context) ([]store.Session, error) {
	return list(ctx, o.D.Reads(), "live sessions", scanSession, `SELECT `+sessionColumns+` FROM sessions
WHERE status IN ('launching', 'confirmed') ORDER BY started_at, id`)
}

// endLiveSessions ends the live sessions of task id inside tx (a
// transition's EndLive), locking their rows where the dialect locks rows.
func endLiveSessions(ctx context.Context, tx Tx, id task.ID, e store.SessionsEnd) error {
	// The rows are read whole, and closed, before the first update: a
	// transaction's connection runs one statement at a time.
	live, err := list(ctx, tx, "live sessions of task "+string(id), scanSession, `SELECT `+sessionColumns+` FROM sessions
WHERE task_id = ? AND status IN ('launching', 'confirmed')`+tx.Dialect().forUpdate(), string(id))
	if err != nil {
		return err
	}
	for _, ss := range live {
		ss = e.End(ss)
		if _, err := tx.Exec(ctx, `UPDATE sessions SET status = ?, ended_at = ?, continuity = ? WHERE id = ?`,
			string(ss.Status), tx.Dialect().Time(ss.EndedAt), ss.Continuity, ss.ID); err != nil {
			return fmt.Errorf("end session %s: %w", ss.ID, err)
		}
	}
	return nil
}

func scanSession(row Row) (store.Session, error) {
	var (
		ss                    store.Session
		taskID, phase, status string
	)
	err := row.Scan(&ss.ID, &taskID, &phase, &ss.Attempt, &ss.Harness, &ss.Model, &ss.Token, &ss.Holder, &status,
		&ss.ExitCode, &ss.CastPath, &ss.Brief, &ss.Fingerprint, &ss.Continuity, At(&ss.StartedAt), At(&ss.EndedAt))
	if err != nil {
		return ss, err
	}
	ss.TaskID, ss.Phase, ss.Status = task.ID(taskID), task.Phase(phase), store.SessionStatus(status)
	return ss, nil
}
