package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// timeLayout is fixed-width, nanosecond, always UTC, so stored times compare
// correctly as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// timeText renders t for a column.
func timeText(t time.Time) string { return t.UTC().Format(timeLayout) }

// parseTime reads a column written by timeText.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// jsonText renders v for a JSON column.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// write runs fn in one IMMEDIATE transaction on the writer connection and
// commits it when fn returns nil; any error rolls everything back, the events
// fn appended included. It is bounded by the call timeout when ctx has no
// deadline of its own, as the PostgreSQL driver's calls are.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	ctx, cancel := store.Bound(ctx, s.timeout)
	defer cancel()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store %s: begin: %w", s.path, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store %s: commit: %w", s.path, err)
	}
	s.changes.Notify()
	return nil
}

// Listen signals after every write this Store commits. Writes of other
// processes on the same file are not seen: SQLite has no notification.
func (s *Store) Listen(ctx context.Context) (<-chan struct{}, error) {
	return s.changes.Listen(ctx)
}

const insertEvent = `INSERT INTO events (id, task_id, session_id, kind, reason, text, data, at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// appendEvents adds events to the ledger inside tx; SQLite assigns seq. An
// event without an id gets a fresh ULID stamped with its time.
func (s *Store) appendEvents(ctx context.Context, tx *sql.Tx, events []task.Event) error {
	if len(events) == 0 {
		return nil
	}
	// The statement was prepared once on the writer's only connection, so
	// binding it to the transaction reuses the compiled SQL.
	stmt := tx.StmtContext(ctx, s.insertEvent)
	defer stmt.Close()
	for _, e := range events {
		id := e.ID
		if id == "" {
			id = task.NewULID(e.At)
		}
		var data any
		if e.Data != nil {
			data = string(e.Data)
		}
		if _, err := stmt.ExecContext(ctx, id, string(e.TaskID), e.SessionID, string(e.Kind),
			string(e.Reason), e.Text, data, timeText(e.At)); err != nil {
			return fmt.Errorf("append %s event for task %s: %w", e.Kind, e.TaskID, err)
		}
		if err := sqlq.AddUsage(ctx, writer{tx}, e); err != nil {
			return err
		}
	}
	return nil
}

// stringsJSON decodes a JSON array of strings, as jsonText wrote it, into
// dst: a scan of the plain form json.Marshal gives simple strings, and
// encoding/json for anything else (an escape, odd spacing, null). A store
// of thousands of tasks holds three such arrays per task, and reflection
// would cost more than the rest of reading them.
func stringsJSON[S ~[]E, E ~string](text string, dst *S) error {
	if len(text) < 2 || text[0] != '[' || text[len(text)-1] != ']' {
		return json.Unmarshal([]byte(text), dst)
	}
	body := text[1 : len(text)-1]
	out := S{}
	for body != "" {
		if body[0] != '"' {
			return json.Unmarshal([]byte(text), dst)
		}
		end := 1
		for end < len(body) && body[end] != '"' {
			if c := body[end]; c == '\\' || c < 0x20 {
				return json.Unmarshal([]byte(text), dst)
			}
			end++
		}
		if end == len(body) {
			return json.Unmarshal([]byte(text), dst)
		}
		s := body[1:end]
		if !utf8.ValidString(s) {
			return json.Unmarshal([]byte(text), dst)
		}
		out = append(out, E(s))
		body = body[end+1:]
		if body == "" {
			break
		}
		if body[0] != ',' || len(body) == 1 {
			return json.Unmarshal([]byte(text), dst)
		}
		body = body[1:]
	}
	*dst = out
	return nil
}
