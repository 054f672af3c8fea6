package sqlite

import (
	"context"
	"database/sql"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
)

// CursorGet returns how far a forge source has read one of its lists.
func (s *Store) CursorGet(ctx context.Context, source, what string) (store.Cursor, error) {
	return sqlq.CursorGet(ctx, reader{s.r}, source, what)
}

// CursorPut records a forge source's cursor; Since never moves back.
func (s *Store) CursorPut(ctx context.Context, c store.Cursor) error {
	return s.write(ctx, func(tx *sql.Tx) error { return sqlq.CursorPut(ctx, writer{tx}, c) })
}
