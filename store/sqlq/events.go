package sqlq

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// InsertEvent is the ledger's insert, which a driver's AppendEvents runs
// with EventArgs for each event; the database assigns seq.
const InsertEvent = `INSERT INTO events (id, task_id, session_id, kind, reason, text, data, at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// EventArgs are InsertEvent's arguments for e in d. An event without an id
// gets a fresh ULID stamped with its time.
func EventArgs(d Dialect, e task.Event) []any {
	id := e.ID
	if id == "" {
		id = task.NewULID(e.At)
	}
	var data any
	if e.Data != nil {
		data = string(e.Data)
	}
	return []any{id, string(e.TaskID), e.SessionID, string(e.Kind), string(e.Reason), e.Text, data, d.Time(e.At)}
}

// EventAppend appends events to the ledger in one transaction; the store
// assigns each a Seq larger than any before it.
func (o Ops) EventAppend(ctx context.Context, events ...task.Event) error {
	if len(events) == 0 {
		return nil
	}
	return o.D.Write(ctx, func(tx Tx) error { return tx.AppendEvents(ctx, events) })
}

// EventLastSeq returns the newest event's seq, 0 when there is none.
func (o Ops) EventLastSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := o.D.Reads().QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read the newest event: %w", err)
	}
	return seq, nil
}

// EventSeqs returns the seq of each of ids in the ledger, in chunks that
// stay under the dialect's limit of bound parameters.
func (o Ops) EventSeqs(ctx context.Context, ids []string) (map[string]int64, error) {
	r := o.D.Reads()
	out := make(map[string]int64, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), r.Dialect().maxIn())
		cond, args := r.Dialect().In("id", ids[:n])
		ids = ids[n:]
		rows, err := r.Query(ctx, `SELECT id, seq FROM events WHERE `+cond, args...)
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
func (o Ops) EventList(ctx context.Context, p store.EventListParams) ([]task.Event, error) {
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
	rows, err := o.D.Reads().Query(ctx, q, args...)
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
			e                    task.Event
			taskID, kind, reason string
			data                 []byte
		)
		if err := rows.Scan(&e.Seq, &e.ID, &taskID, &e.SessionID, &kind, &reason, &e.Text, &data, At(&e.At)); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		e.TaskID, e.Kind, e.Reason, e.Data = task.ID(taskID), task.Kind(kind), task.Reason(reason), data
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
