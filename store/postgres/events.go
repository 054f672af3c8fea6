package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// appendEvents adds events to the ledger inside tx, in one round trip, and
// their usage to the sums; the identity column assigns seq in batch order.
func appendEvents(ctx context.Context, tx pgx.Tx, events []task.Event) error {
	if len(events) == 0 {
		return nil
	}
	var batch pgx.Batch
	q := sqlq.Postgres.Bind(sqlq.InsertEvent)
	for _, e := range events {
		batch.Queue(q, sqlq.EventArgs(sqlq.Postgres, e)...)
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
	return sqlq.AddUsage(ctx, txq{tx}, events...)
}
