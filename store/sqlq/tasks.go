package sqlq

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TaskColumns are the tasks table's columns as ScanTask reads them.
const TaskColumns = insertColumns + `, signature`

// insertColumns are the columns of every schema version's tasks table; the
// signature (a later version's) is written after the row, only when set,
// so the SQLite driver's tests can write a task into an older schema.
const insertColumns = `id, title, goal, acceptance, verify, repo, pipeline, harness, model, capabilities,
state, phase, attempt, base_commit, branch, reason, created_at, updated_at`

// notFound turns a missing row into store.ErrNotFound naming what, and any
// other error into one saying what failed (verb).
func notFound(err error, verb, what string) error {
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("%s %s: %w", verb, what, err)
}

// Collect scans every row with scan and closes rows.
func Collect[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
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

// write runs fn in one write transaction of d and appends events after it,
// in the same transaction.
func write(ctx context.Context, d Driver, events []task.Event, fn func(Tx) error) error {
	return d.Write(ctx, func(tx Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, events)
	})
}

// list runs q on r and collects its rows with scan; an error says what
// failed to list.
func list[T any](ctx context.Context, r Querier, what string, scan func(Row) (T, error), q string, args ...any) ([]T, error) {
	rows, err := r.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	out, err := Collect(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return out, nil
}

// get runs q, which reads one row, on r and scans it with scan; a missing
// row is store.ErrNotFound naming what.
func get[T any](ctx context.Context, r Querier, what string, scan func(Row) (T, error), q string, args ...any) (T, error) {
	v, err := scan(r.QueryRow(ctx, q, args...))
	if err != nil {
		var none T
		return none, notFound(err, "get", what)
	}
	return v, nil
}

// TaskInsert stores a new task and its events in one transaction.
func (o Ops) TaskInsert(ctx context.Context, t task.Task, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		return InsertTask(ctx, tx, t)
	})
}

// InsertTask writes a new task row inside tx.
func InsertTask(ctx context.Context, tx Tx, t task.Task) error {
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
	d := tx.Dialect()
	_, err = tx.Exec(ctx, `INSERT INTO tasks (`+insertColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(t.ID), t.Title, t.Goal, acceptance, t.Verify, t.Repo, pipeline, t.Harness, t.Model, caps,
		string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
		d.Time(t.CreatedAt), d.Time(t.UpdatedAt))
	if err != nil {
		return tx.BranchTaken(ctx, t, fmt.Errorf("insert task %s: %w", t.ID, err))
	}
	if t.Signature != "" {
		if _, err := tx.Exec(ctx, `UPDATE tasks SET signature = ? WHERE id = ?`, t.Signature, string(t.ID)); err != nil {
			return fmt.Errorf("insert task %s: its signature: %w", t.ID, err)
		}
	}
	return nil
}

// TaskGet returns the task with id, or store.ErrNotFound.
func (o Ops) TaskGet(ctx context.Context, id task.ID) (task.Task, error) {
	return get(ctx, o.D.Reads(), "task "+string(id), scanTask, `SELECT `+TaskColumns+` FROM tasks WHERE id = ?`, string(id))
}

// TaskList returns the tasks in the given states (all when none is given),
// oldest first.
func (o Ops) TaskList(ctx context.Context, p store.TaskListParams) ([]task.Task, error) {
	r := o.D.Reads()
	q := `SELECT ` + TaskColumns + ` FROM tasks`
	var args []any
	if len(p.States) > 0 {
		states := make([]string, len(p.States))
		for i, st := range p.States {
			states[i] = string(st)
		}
		var cond string
		cond, args = r.Dialect().In("state", states)
		q += ` WHERE ` + cond
	}
	q += ` ORDER BY created_at, id`
	return list(ctx, r, "tasks", scanTask, q, args...)
}

func scanTask(row Row) (task.Task, error) { return ScanTask(row, nil) }

// TaskUpdate writes the coordinator-owned fields of p.Task and appends
// p.Events, only if the stored task is in p.ExpectState and, when
// p.ExpectToken is non-zero, holds that lease token.
func (o Ops) TaskUpdate(ctx context.Context, p store.TaskUpdateParams) error {
	t := p.Task
	return write(ctx, o.D, p.Events, func(tx Tx) error {
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
		_, err = tx.Exec(ctx, `UPDATE tasks SET state = ?, phase = ?, attempt = ?, base_commit = ?,
branch = ?, reason = ?, updated_at = ? WHERE id = ?`,
			string(t.State), string(t.Phase), t.Attempt, t.BaseCommit, t.Branch, t.Reason,
			tx.Dialect().Time(t.UpdatedAt), string(t.ID))
		if err != nil {
			return tx.BranchTaken(ctx, t, fmt.Errorf("update task %s: %w", t.ID, err))
		}
		return nil
	})
}

// TaskToken returns the task's current lease token, 0 before any grant.
func (o Ops) TaskToken(ctx context.Context, id task.ID) (int64, error) {
	var token int64
	if err := o.D.Reads().QueryRow(ctx, `SELECT token FROM tasks WHERE id = ?`, string(id)).Scan(&token); err != nil {
		return 0, notFound(err, "get the token of", "task "+string(id))
	}
	return token, nil
}

// taskGuard reads the state and token a guarded write checks, inside its
// transaction (under the write lock, so they cannot change under it).
func taskGuard(ctx context.Context, tx Tx, id task.ID) (task.State, int64, error) {
	var state string
	var token int64
	if err := tx.QueryRow(ctx, `SELECT state, token FROM tasks WHERE id = ?`, string(id)).Scan(&state, &token); err != nil {
		return "", 0, notFound(err, "read", "task "+string(id))
	}
	return task.State(state), token, nil
}

// TaskSign records the signature of a task that has none.
func (o Ops) TaskSign(ctx context.Context, id task.ID, signature string) error {
	return o.D.Write(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE tasks SET signature = ? WHERE id = ? AND signature = ''`, signature, string(id))
		if err != nil {
			return fmt.Errorf("sign task %s: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("sign task %s: it is gone or already signed: %w", id, store.ErrConflict)
		}
		return nil
	})
}

// ScanTask scans the TaskColumns followed, when token is not nil, by the
// task's lease token.
func ScanTask(row Row, token *int64) (task.Task, error) {
	var (
		t                          task.Task
		id, state, phase           string
		acceptance, pipeline, caps string
	)
	dest := []any{&id, &t.Title, &t.Goal, &acceptance, &t.Verify, &t.Repo, &pipeline, &t.Harness, &t.Model, &caps,
		&state, &phase, &t.Attempt, &t.BaseCommit, &t.Branch, &t.Reason, At(&t.CreatedAt), At(&t.UpdatedAt), &t.Signature}
	if token != nil {
		dest = append(dest, token)
	}
	if err := row.Scan(dest...); err != nil {
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
	return t, nil
}

// WithExtra scans a row's leading columns into a scanner's destinations
// and the rest into Extra: ScanTask followed by a driver's own columns.
type WithExtra struct {
	Row   Row
	Extra []any
}

// Scan scans into dest and then Extra.
func (w WithExtra) Scan(dest ...any) error { return w.Row.Scan(append(dest, w.Extra...)...) }

// TaskImport stores a new task with its history in one transaction: a task
// resumed from a handoff arrives whole or not at all. Imported artifacts
// carry lease token 0: they were sealed elsewhere, under a lease this store
// never granted.
func (o Ops) TaskImport(ctx context.Context, p store.TaskImportParams) error {
	if err := p.Check(); err != nil {
		return err
	}
	id := p.Task.ID
	return write(ctx, o.D, p.Events, func(tx Tx) error {
		if err := InsertTask(ctx, tx, p.Task); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		for _, ss := range p.Sessions {
			if err := insertSession(ctx, tx, ss); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, a := range p.Artifacts {
			a.SHA256 = sha256Hex(a.Content)
			if err := insertArtifact(ctx, tx, a, 0); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, d := range p.Decisions {
			if err := insertDecision(ctx, tx, d); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, d := range p.DeadEnds {
			if err := insertDeadEnd(ctx, tx, d); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		return nil
	})
}
