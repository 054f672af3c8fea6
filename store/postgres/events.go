package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// EventAppend appends events to the ledger in one transaction; the store
// assigns each a Seq larger than any before it.
func (s *Store) EventAppend(ctx context.Context, events ...task.Event) error {
	if len(events) == 0 {
		return nil
	}
	return s.write(ctx, func(tx pgx.Tx) error { return appendEvents(ctx, tx, events) })
}

// appendEvents adds events to the ledger inside tx, in one round trip; the
// identity column assigns seq in batch order. An event without an id gets a
// fresh ULID stamped with its time.
func appendEvents(ctx context.Context, tx pgx.Tx, events []task.Event) error {
	if len(events) == 0 {
		return nil
	}
	var batch pgx.Batch
	for _, e := range events {
		id := e.ID
		if id == "" {
			id = task.NewULID(e.At)
		}
		var data *string
		if e.Data != nil {
			d := string(e.Data)
			data = &d
		}
		batch.Queue(`INSERT INTO events (id, task_id, session_id, kind, reason, text, data, at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			id, string(e.TaskID), e.SessionID, string(e.Kind), string(e.Reason), e.Text, data, e.At.UTC())
	}
	br := tx.SendBatch(ctx, &batch)
	for _, e := range events {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("append %s event for task %s: %w", e.Kind, e.TaskID, err)
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	return sqlq.AddUsage(ctx, writer{tx}, events...)
}

// EventLastSeq returns the newest event's seq, 0 when there is none.
func (s *Store) EventLastSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read the newest event: %w", err)
	}
	return seq, nil
}

// EventSeqs returns the seq of each of ids in the ledger.
func (s *Store) EventSeqs(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, seq FROM events WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read events' seq: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("read events' seq: %w", err)
		}
		out[id] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events' seq: %w", err)
	}
	return out, nil
}

// EventList returns events in ledger order, of one task or of all, after
// p.AfterSeq, at most p.Limit of them when it is positive.
func (s *Store) EventList(ctx context.Context, p store.EventListParams) ([]task.Event, error) {
	q := `SELECT seq, id, task_id, session_id, kind, reason, text, data, at FROM events
WHERE seq > $1 AND ($2 = '' OR task_id = $2) ORDER BY seq`
	args := []any{p.AfterSeq, string(p.TaskID)}
	if p.Limit > 0 {
		q += ` LIMIT $3`
		args = append(args, p.Limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (task.Event, error) {
		var (
			e                    task.Event
			taskID, kind, reason string
			data                 *string
		)
		if err := row.Scan(&e.Seq, &e.ID, &taskID, &e.SessionID, &kind, &reason, &e.Text, &data, &e.At); err != nil {
			return e, err
		}
		e.TaskID, e.Kind, e.Reason, e.At = task.ID(taskID), task.Kind(kind), task.Reason(reason), e.At.UTC()
		if data != nil {
			e.Data = []byte(*data)
		}
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
