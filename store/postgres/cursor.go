package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
)

// CursorGet returns how far a forge source has read one of its lists.
func (s *Store) CursorGet(ctx context.Context, source, what string) (store.Cursor, error) {
	return sqlq.CursorGet(ctx, reader{s.pool}, source, what)
}

// CursorPut records a forge source's cursor; Since never moves back.
func (s *Store) CursorPut(ctx context.Context, c store.Cursor) error {
	return s.write(ctx, func(tx pgx.Tx) error { return sqlq.CursorPut(ctx, writer{tx}, c) })
}
