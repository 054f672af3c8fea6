package sqlq

import (
	"context"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// upsertCursor keeps the later since of the recorded and the written one,
// and the recorded ref when the written one is 0.
const upsertCursor = `INSERT INTO source_cursors (source, what, since_ms, ref) VALUES (?, ?, ?, ?)
ON CONFLICT (source, what) DO UPDATE SET
	since_ms = CASE WHEN excluded.since_ms > source_cursors.since_ms THEN excluded.since_ms ELSE source_cursors.since_ms END,
	ref = CASE WHEN excluded.ref <> 0 THEN excluded.ref ELSE source_cursors.ref END`

// The source_cursors table keeps its times as milliseconds since the
// epoch (0 for none), so both dialects bind and compare plain integers.

// CursorPut records a forge source's cursor; Since never moves back.
func (o Ops) CursorPut(ctx context.Context, c store.Cursor) error {
	return o.D.Write(ctx, func(tx Tx) error {
		if _, err := tx.Exec(ctx, upsertCursor, c.Source, c.What, millis(c.Since), c.Ref); err != nil {
			return fmt.Errorf("record the cursor of %s %s: %w", c.Source, c.What, err)
		}
		return nil
	})
}

// CursorGet returns how far a forge source has read one of its lists, or
// store.ErrNotFound.
func (o Ops) CursorGet(ctx context.Context, source, what string) (store.Cursor, error) {
	rows, err := o.D.Reads().Query(ctx, `SELECT since_ms, ref FROM source_cursors WHERE source = ? AND what = ?`, source, what)
	if err != nil {
		return store.Cursor{}, fmt.Errorf("read the cursor of %s %s: %w", source, what, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return store.Cursor{}, fmt.Errorf("read the cursor of %s %s: %w", source, what, err)
		}
		return store.Cursor{}, fmt.Errorf("cursor of %s %s: %w", source, what, store.ErrNotFound)
	}
	c := store.Cursor{Source: source, What: what}
	var ms int64
	if err := rows.Scan(&ms, &c.Ref); err != nil {
		return store.Cursor{}, fmt.Errorf("read the cursor of %s %s: %w", source, what, err)
	}
	if ms != 0 {
		c.Since = time.UnixMilli(ms).UTC()
	}
	return c, nil
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
