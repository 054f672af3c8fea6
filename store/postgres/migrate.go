package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
)

// migrations are the schema steps, in order: migrations[i] takes a database
// from version i to version i+1; orchestra_schema records how many have run.
// Never edit a released step; append a new one. JSON columns are text, not
// jsonb, so a value reads back byte for byte as it was written.
var migrations = []string{
	// 1: the tables, as the SQLite driver's first four steps leave them.
	`
CREATE TABLE tasks (
	id           text PRIMARY KEY,
	title        text NOT NULL,
	goal         text NOT NULL,
	acceptance   text NOT NULL,
	verify       text NOT NULL,
	repo         text NOT NULL,
	pipeline     text NOT NULL,
	harness      text NOT NULL,
	model        text NOT NULL,
	capabilities text NOT NULL,
	state        text NOT NULL,
	phase        text NOT NULL,
	attempt      integer NOT NULL,
	base_commit  text NOT NULL,
	branch       text NOT NULL,
	reason       text NOT NULL,
	token        bigint NOT NULL DEFAULT 0,
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL
);
CREATE INDEX tasks_state ON tasks (state);

CREATE TABLE events (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         text NOT NULL UNIQUE,
	task_id    text NOT NULL,
	session_id text NOT NULL,
	kind       text NOT NULL,
	reason     text NOT NULL,
	text       text NOT NULL,
	data       text,
	at         timestamptz NOT NULL
);
CREATE INDEX events_task ON events (task_id, seq);

CREATE TABLE decisions (
	id      text PRIMARY KEY,
	task_id text NOT NULL REFERENCES tasks (id),
	text    text NOT NULL,
	author  text NOT NULL,
	at      timestamptz NOT NULL
);
CREATE INDEX decisions_task ON decisions (task_id, at);

CREATE TABLE sessions (
	id          text PRIMARY KEY,
	task_id     text NOT NULL REFERENCES tasks (id),
	phase       text NOT NULL,
	attempt     integer NOT NULL,
	harness     text NOT NULL,
	model       text NOT NULL,
	token       bigint NOT NULL,
	holder      text NOT NULL,
	status      text NOT NULL,
	exit_code   integer NOT NULL,
	cast_path   text NOT NULL,
	brief       text NOT NULL,
	fingerprint text NOT NULL,
	continuity  text NOT NULL,
	started_at  timestamptz NOT NULL,
	ended_at    timestamptz NOT NULL
);
CREATE INDEX sessions_task ON sessions (task_id, started_at);

CREATE TABLE deliveries (
	decision_id text NOT NULL REFERENCES decisions (id),
	session_id  text NOT NULL REFERENCES sessions (id),
	at          timestamptz NOT NULL,
	PRIMARY KEY (decision_id, session_id)
);

CREATE TABLE artifacts (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	task_id    text NOT NULL REFERENCES tasks (id),
	phase      text NOT NULL,
	content    bytea NOT NULL,
	sha256     text NOT NULL,
	session_id text NOT NULL,
	token      bigint NOT NULL,
	at         timestamptz NOT NULL
);
CREATE INDEX artifacts_task ON artifacts (task_id, id);

CREATE TABLE leases (
	task_id          text PRIMARY KEY REFERENCES tasks (id),
	holder           text NOT NULL,
	token            bigint NOT NULL,
	granted_at       timestamptz NOT NULL,
	deadline         timestamptz NOT NULL,
	renewals         integer NOT NULL,
	baseline         text NOT NULL,
	last_progress_at timestamptz NOT NULL,
	last_decision    text NOT NULL,
	last_reason      text NOT NULL
);

CREATE TABLE verdicts (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	task_id    text NOT NULL REFERENCES tasks (id),
	session_id text NOT NULL,
	phase      text NOT NULL,
	status     text NOT NULL,
	verdict    text NOT NULL,
	at         timestamptz NOT NULL
);
CREATE INDEX verdicts_task ON verdicts (task_id, id);

CREATE TABLE dead_ends (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	task_id text NOT NULL REFERENCES tasks (id),
	phase   text NOT NULL,
	attempt integer NOT NULL,
	text    text NOT NULL,
	at      timestamptz NOT NULL
);
CREATE INDEX dead_ends_task ON dead_ends (task_id, id);

CREATE TABLE bases (
	id               text PRIMARY KEY,
	task_id          text NOT NULL REFERENCES tasks (id),
	harness          text NOT NULL,
	model            text NOT NULL,
	fingerprint      text NOT NULL,
	fingerprint_hash text NOT NULL,
	training         text NOT NULL,
	created_at       timestamptz NOT NULL,
	last_hit_at      timestamptz NOT NULL,
	forks            integer NOT NULL,
	retired_at       timestamptz NOT NULL,
	last_used_at     timestamptz NOT NULL
);
CREATE INDEX bases_task ON bases (task_id, created_at);
`,
	// 2: usage sums kept with each session.usage event (usage.go).
	migrationUsageTotals,
	// 3: engines and their heartbeats (engines.go).
	`
CREATE TABLE engines (
	id           text PRIMARY KEY,
	host         text NOT NULL,
	pid          integer NOT NULL,
	version      text NOT NULL,
	repo         text NOT NULL,
	slots        integer NOT NULL,
	busy         integer NOT NULL,
	started_at   timestamptz NOT NULL,
	heartbeat_at timestamptz NOT NULL,
	stopped_at   timestamptz NOT NULL
);
`,
	// 4: how another machine reaches each engine (engines.go).
	`
ALTER TABLE engines ADD COLUMN ssh text NOT NULL DEFAULT '';
ALTER TABLE engines ADD COLUMN bin text NOT NULL DEFAULT '';
`,
	// 5: live branch: two tasks that have not ended never share a branch
	// (store.EndedStates; branchTaken names the holder).
	`
CREATE UNIQUE INDEX tasks_live_branch ON tasks (branch)
WHERE branch <> '' AND state NOT IN ('completed', 'failed', 'cancelled', 'merged');
`,
	// 6: review comments: a decision's anchor in the diff (JSON or NULL)
	// and when it was resolved (records.go).
	`
ALTER TABLE decisions ADD COLUMN anchor text;
ALTER TABLE decisions ADD COLUMN resolved_at timestamptz;
`,
	// 7: the fleet key's signature of each task (signature.go).
	migrationSignature,
	// 8: how far each forge source has read each list (cursor.go;
	// times in milliseconds, as store/sqlq binds them).
	`
CREATE TABLE source_cursors (
	source   text NOT NULL,
	what     text NOT NULL,
	since_ms bigint NOT NULL,
	ref      bigint NOT NULL,
	PRIMARY KEY (source, what)
);
`,
	// 9: the lower-bound mark of the usage sums (usage.go).
	migrationUsageLowerBound,
	// 10: an engine that stopped keeping its agents for the next
	// (engines.go).
	`
ALTER TABLE engines ADD COLUMN kept boolean NOT NULL DEFAULT false;
`,
}

// migrate brings the schema to version target in one transaction under the
// write lock, so engines that start together cannot both run a step.
func (s *Store) migrate(ctx context.Context, target int) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		version, err := s.schemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		if version >= target {
			return nil
		}
		if version < 0 {
			if _, err := tx.Exec(ctx, `CREATE TABLE orchestra_schema (version integer NOT NULL)`); err != nil {
				return fmt.Errorf("open store %s: %w", s.where, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO orchestra_schema (version) VALUES (0)`); err != nil {
				return fmt.Errorf("open store %s: %w", s.where, err)
			}
			version = 0
		}
		for v := version; v < target; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("open store %s: migrate schema to version %d: %w", s.where, v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE orchestra_schema SET version = $1`, target); err != nil {
			return fmt.Errorf("open store %s: %w", s.where, err)
		}
		return nil
	})
}

// schemaVersion reads the schema version, -1 for an empty database. It
// refuses a database with tables of its own but no orchestra_schema, and a
// version newer than this binary's.
func (s *Store) schemaVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	var tables int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
WHERE table_schema = current_schema()`).Scan(&tables); err != nil {
		return 0, fmt.Errorf("open store %s: %w", s.where, err)
	}
	// Looking the table up first keeps the transaction usable: a query on
	// a missing table would abort it.
	var missing bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('orchestra_schema') IS NULL`).Scan(&missing); err != nil {
		return 0, fmt.Errorf("open store %s: %w", s.where, err)
	}
	var version int
	if !missing {
		if err := tx.QueryRow(ctx, `SELECT version FROM orchestra_schema`).Scan(&version); err != nil {
			return 0, fmt.Errorf("open store %s: read its schema version: %w", s.where, err)
		}
	}
	switch {
	case missing && tables == 0:
		return -1, nil
	case missing:
		return 0, fmt.Errorf("%s holds %d tables but no orchestra_schema, so it is not an orchestra store; point [store] url at an empty database: %w", s.where, tables, store.ErrForeign)
	case version > len(migrations):
		return 0, fmt.Errorf("%s has schema version %d but this orchestra-tui knows only up to %d; upgrade orchestra-tui: %w", s.where, version, len(migrations), store.ErrTooNew)
	}
	return version, nil
}
