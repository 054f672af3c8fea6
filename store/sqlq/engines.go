package sqlq

import (
	"context"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// A store several machines share keeps its own clock for the engines'
// liveness (store.Engine.StoreClock): PostgreSQL stamps a heartbeat and a
// clean stop with now() at the write, whatever the writer passed, and
// reads a heartbeat's age by that same clock. SQLite, one machine's file,
// keeps the writer's times.

// clock is the value a stamp of t takes in d: a placeholder bound to t, or
// the database's own now() with nothing to bind.
func (d Dialect) clock(t time.Time) (string, []any) {
	if d == Postgres {
		return "now()", nil
	}
	return "?", []any{d.Time(t)}
}

// beatAge is the column that reads a heartbeat's age in seconds by the
// store's clock, "" where the store keeps none. On PostgreSQL the age
// counts from the server's start at the earliest: while the server was
// down (a restart, an outage) no engine could beat, so the time it was
// down says nothing of any engine, and every engine has a whole TTL from
// the server's return to beat again before another may judge it lost,
// whenever each one's connection came back.
func (d Dialect) beatAge() string {
	if d == Postgres {
		return `, extract(epoch FROM now() - greatest(heartbeat_at, pg_postmaster_start_time()))::float8`
	}
	return ""
}

// EngineHeartbeat records an engine's liveness and load. Kept counts only
// with a clean stop.
func (o Ops) EngineHeartbeat(ctx context.Context, e store.Engine) error {
	return o.D.Write(ctx, func(tx Tx) error {
		d := tx.Dialect()
		stopped := !e.StoppedAt.IsZero()
		beat, beatArgs := d.clock(e.HeartbeatAt)
		stop, stopArgs := "?", []any{d.Time(time.Time{})}
		if stopped {
			stop, stopArgs = d.clock(e.StoppedAt)
		}
		args := []any{e.ID, e.Host, e.Pid, e.Version, e.Repo, e.Slots, e.Busy, d.Time(e.StartedAt)}
		args = append(append(args, beatArgs...), stopArgs...)
		args = append(args, e.SSH, e.Bin, e.Kept && stopped)
		_, err := tx.Exec(ctx, `INSERT INTO engines (id, host, pid, version, repo, slots, busy,
started_at, heartbeat_at, stopped_at, ssh, bin, kept) VALUES (?, ?, ?, ?, ?, ?, ?, ?, `+beat+`, `+stop+`, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, version = excluded.version,
repo = excluded.repo, slots = excluded.slots, busy = excluded.busy, started_at = excluded.started_at,
heartbeat_at = excluded.heartbeat_at, stopped_at = excluded.stopped_at, ssh = excluded.ssh, bin = excluded.bin,
kept = excluded.kept`, args...)
		if err != nil {
			return fmt.Errorf("record heartbeat of engine %s: %w", e.ID, err)
		}
		return nil
	})
}

// EngineList returns every recorded engine, most recent heartbeat first.
func (o Ops) EngineList(ctx context.Context) ([]store.Engine, error) {
	r := o.D.Reads()
	age := r.Dialect().beatAge()
	return list(ctx, r, "engines", func(row Row) (store.Engine, error) {
		var e store.Engine
		dest := []any{&e.ID, &e.Host, &e.Pid, &e.Version, &e.Repo, &e.Slots, &e.Busy,
			At(&e.StartedAt), At(&e.HeartbeatAt), At(&e.StoppedAt), &e.SSH, &e.Bin, &e.Kept}
		var secs float64
		if age != "" {
			e.StoreClock = true
			dest = append(dest, &secs)
		}
		err := row.Scan(dest...)
		e.BeatAge = time.Duration(secs * float64(time.Second))
		return e, err
	}, `SELECT id, host, pid, version, repo, slots, busy, started_at,
heartbeat_at, stopped_at, ssh, bin, kept`+age+` FROM engines ORDER BY heartbeat_at DESC, id`)
}
