package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// EngineHeartbeat records an engine's liveness and load.
func (s *Store) EngineHeartbeat(ctx context.Context, e store.Engine) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO engines (id, host, pid, version, repo, slots, busy,
started_at, heartbeat_at, stopped_at, ssh, bin, kept) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, version = excluded.version,
repo = excluded.repo, slots = excluded.slots, busy = excluded.busy, started_at = excluded.started_at,
heartbeat_at = excluded.heartbeat_at, stopped_at = excluded.stopped_at, ssh = excluded.ssh, bin = excluded.bin,
kept = excluded.kept`,
			e.ID, e.Host, e.Pid, e.Version, e.Repo, e.Slots, e.Busy,
			timeText(e.StartedAt), timeText(e.HeartbeatAt), timeText(e.StoppedAt), e.SSH, e.Bin, e.Kept && !e.StoppedAt.IsZero())
		if err != nil {
			return fmt.Errorf("record heartbeat of engine %s: %w", e.ID, err)
		}
		return nil
	})
}

// EngineList returns every recorded engine, most recent heartbeat first.
func (s *Store) EngineList(ctx context.Context) ([]store.Engine, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, host, pid, version, repo, slots, busy, started_at,
heartbeat_at, stopped_at, ssh, bin, kept FROM engines ORDER BY heartbeat_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list engines: %w", err)
	}
	defer rows.Close()
	var out []store.Engine
	for rows.Next() {
		var e store.Engine
		var started, beat, stopped string
		if err := rows.Scan(&e.ID, &e.Host, &e.Pid, &e.Version, &e.Repo, &e.Slots, &e.Busy,
			&started, &beat, &stopped, &e.SSH, &e.Bin, &e.Kept); err != nil {
			return nil, fmt.Errorf("list engines: %w", err)
		}
		if e.StartedAt, err = parseTime(started); err != nil {
			return nil, err
		}
		if e.HeartbeatAt, err = parseTime(beat); err != nil {
			return nil, err
		}
		if e.StoppedAt, err = parseTime(stopped); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list engines: %w", err)
	}
	return out, nil
}
