package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// EngineHeartbeat records an engine's liveness and load. The heartbeat
// (and a clean stop) is stamped with the database's clock, not the
// writer's: engines on several machines are judged by one clock, so a
// machine whose clock is off neither looks lost nor hides a loss.
func (s *Store) EngineHeartbeat(ctx context.Context, e store.Engine) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO engines (id, host, pid, version, repo, slots, busy,
started_at, heartbeat_at, stopped_at, ssh, bin, kept) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(),
CASE WHEN $9 THEN now() ELSE $10 END, $11, $12, $9 AND $13)
ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, version = excluded.version,
repo = excluded.repo, slots = excluded.slots, busy = excluded.busy, started_at = excluded.started_at,
heartbeat_at = excluded.heartbeat_at, stopped_at = excluded.stopped_at, ssh = excluded.ssh, bin = excluded.bin,
kept = excluded.kept`,
			e.ID, e.Host, e.Pid, e.Version, e.Repo, e.Slots, e.Busy,
			e.StartedAt.UTC(), !e.StoppedAt.IsZero(), time.Time{}.UTC(), e.SSH, e.Bin, e.Kept)
		if err != nil {
			return fmt.Errorf("record heartbeat of engine %s: %w", e.ID, err)
		}
		return nil
	})
}

// EngineList returns every recorded engine, most recent heartbeat first.
// A heartbeat's age counts from the database server's start at the
// earliest: while the server was down (a restart, an outage) no engine
// could beat, so the time it was down says nothing of any engine, and every
// engine has a whole TTL from the server's return to beat again before
// another may judge it lost, whenever each one's connection came back.
func (s *Store) EngineList(ctx context.Context) ([]store.Engine, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, host, pid, version, repo, slots, busy, started_at,
heartbeat_at, stopped_at, ssh, bin, kept, extract(epoch FROM now() - greatest(heartbeat_at, pg_postmaster_start_time()))::float8
FROM engines ORDER BY heartbeat_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list engines: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.Engine, error) {
		e := store.Engine{StoreClock: true}
		var age float64
		err := row.Scan(&e.ID, &e.Host, &e.Pid, &e.Version, &e.Repo, &e.Slots, &e.Busy,
			&e.StartedAt, &e.HeartbeatAt, &e.StoppedAt, &e.SSH, &e.Bin, &e.Kept, &age)
		e.StartedAt, e.HeartbeatAt, e.StoppedAt = e.StartedAt.UTC(), e.HeartbeatAt.UTC(), e.StoppedAt.UTC()
		e.BeatAge = time.Duration(age * float64(time.Second))
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list engines: %w", err)
	}
	return out, nil
}
