package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// EventAppend appends events to the ledger in one transaction; the store
// assigns each a Seq larger than any before it.
func (s *Store) EventAppend(ctx context.Context, events ...task.Event) error {
	if len(events) == 0 {
		return nil
	}
	return s.write(ctx, func(tx *sql.Tx) error { return s.appendEvents(ctx, tx, events) })
}

// EventLastSeq returns the newest event's seq, 0 when there is none.
func (s *Store) EventLastSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read the newest event: %w", err)
	}
	return seq, nil
}

// EventSeqs returns the seq of each of ids in the ledger, in chunks
// that stay under SQLite's limit of bound parameters.
func (s *Store) EventSeqs(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		chunk := ids[:n]
		ids = ids[n:]
		args := make([]any, n)
		for i, id := range chunk {
			args[i] = id
		}
		q := `SELECT id, seq FROM events WHERE id IN (?` + strings.Repeat(`, ?`, n-1) + `)`
		rows, err := s.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("read events' seq: %w", err)
		}
		for rows.Next() {
			var id string
			var seq int64
			if err := rows.Scan(&id, &seq); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read events' seq: %w", err)
			}
			out[id] = seq
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read events' seq: %w", err)
		}
	}
	return out, nil
}

// EventList returns events in ledger order, of one task or of all, after
// p.AfterSeq, at most p.Limit of them when it is positive.
func (s *Store) EventList(ctx context.Context, p store.EventListParams) ([]task.Event, error) {
	q := `SELECT seq, id, task_id, session_id, kind, reason, text, data, at FROM events WHERE seq > ?`
	args := []any{p.AfterSeq}
	if p.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, string(p.TaskID))
	}
	q += ` ORDER BY seq`
	if p.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, p.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []task.Event
	if p.Limit > 0 {
		out = make([]task.Event, 0, p.Limit)
	}
	for rows.Next() {
		var (
			e                        task.Event
			taskID, kind, reason, at string
			data                     []byte
		)
		if err := rows.Scan(&e.Seq, &e.ID, &taskID, &e.SessionID, &kind, &reason, &e.Text, &data, &at); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		e.TaskID, e.Kind, e.Reason, e.Data = task.ID(taskID), task.Kind(kind), task.Reason(reason), data
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
