package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema steps, in order: migrations[i] takes a database
// from version i to version i+1. PRAGMA user_version records how many have
// run. Never edit a released step; append a new one.
var migrations = []string{
	// 1: the tables. Times are fixed-width UTC text (see sqlq.TimeText), so they
	// sort and read well in the sqlite3 shell; structured fields are JSON.
	`
CREATE TABLE tasks (
	id           TEXT PRIMARY KEY,
	title        TEXT NOT NULL,
	goal         TEXT NOT NULL,
	acceptance   TEXT NOT NULL, -- JSON array of strings
	verify       TEXT NOT NULL,
	repo         TEXT NOT NULL,
	pipeline     TEXT NOT NULL, -- JSON array of phases
	harness      TEXT NOT NULL,
	model        TEXT NOT NULL,
	capabilities TEXT NOT NULL, -- JSON array of strings
	state        TEXT NOT NULL,
	phase        TEXT NOT NULL,
	attempt      INTEGER NOT NULL,
	base_commit  TEXT NOT NULL,
	branch       TEXT NOT NULL,
	reason       TEXT NOT NULL,
	token        INTEGER NOT NULL DEFAULT 0, -- last lease token granted; survives the lease
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL
) STRICT;
CREATE INDEX tasks_state ON tasks (state);

CREATE TABLE events (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, so readers can resume after a seq
	id         TEXT NOT NULL UNIQUE,
	task_id    TEXT NOT NULL, -- not a foreign key: the ledger outlives and precedes rows
	session_id TEXT NOT NULL,
	kind       TEXT NOT NULL,
	reason     TEXT NOT NULL,
	text       TEXT NOT NULL,
	data       TEXT, -- JSON or NULL
	at         TEXT NOT NULL
) STRICT;
CREATE INDEX events_task ON events (task_id, seq);

CREATE TABLE decisions (
	id      TEXT PRIMARY KEY,
	task_id TEXT NOT NULL REFERENCES tasks (id),
	text    TEXT NOT NULL,
	author  TEXT NOT NULL,
	at      TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
	id          TEXT PRIMARY KEY,
	task_id     TEXT NOT NULL REFERENCES tasks (id),
	phase       TEXT NOT NULL,
	attempt     INTEGER NOT NULL,
	harness     TEXT NOT NULL,
	model       TEXT NOT NULL,
	token       INTEGER NOT NULL,
	holder      TEXT NOT NULL,
	status      TEXT NOT NULL,
	exit_code   INTEGER NOT NULL,
	cast_path   TEXT NOT NULL,
	brief       TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	continuity  TEXT NOT NULL,
	started_at  TEXT NOT NULL,
	ended_at    TEXT NOT NULL
) STRICT;

CREATE TABLE deliveries (
	decision_id TEXT NOT NULL REFERENCES decisions (id),
	session_id  TEXT NOT NULL REFERENCES sessions (id),
	at          TEXT NOT NULL,
	PRIMARY KEY (decision_id, session_id)
) STRICT;

CREATE TABLE artifacts (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id    TEXT NOT NULL REFERENCES tasks (id),
	phase      TEXT NOT NULL,
	content    BLOB NOT NULL,
	sha256     TEXT NOT NULL,
	session_id TEXT NOT NULL,
	token      INTEGER NOT NULL, -- the lease token it was sealed under
	at         TEXT NOT NULL
) STRICT;

CREATE TABLE leases (
	task_id          TEXT PRIMARY KEY REFERENCES tasks (id),
	holder           TEXT NOT NULL,
	token            INTEGER NOT NULL,
	granted_at       TEXT NOT NULL,
	deadline         TEXT NOT NULL,
	renewals         INTEGER NOT NULL,
	baseline         TEXT NOT NULL, -- JSON lease.Progress
	last_progress_at TEXT NOT NULL,
	last_decision    TEXT NOT NULL,
	last_reason      TEXT NOT NULL
) STRICT;

CREATE TABLE verdicts (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id    TEXT NOT NULL REFERENCES tasks (id),
	session_id TEXT NOT NULL,
	phase      TEXT NOT NULL,
	status     TEXT NOT NULL, -- copied out of verdict for queries
	verdict    TEXT NOT NULL, -- JSON verify.Verdict
	at         TEXT NOT NULL
) STRICT;

CREATE TABLE dead_ends (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id TEXT NOT NULL REFERENCES tasks (id),
	phase   TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	text    TEXT NOT NULL,
	at      TEXT NOT NULL
) STRICT;
`,
	// 2: per-task indexes for the lists the brief and the UI read on every
	// launch and every frame.
	`
CREATE INDEX decisions_task ON decisions (task_id, at);
CREATE INDEX sessions_task ON sessions (task_id, started_at);
CREATE INDEX artifacts_task ON artifacts (task_id, id);
CREATE INDEX verdicts_task ON verdicts (task_id, id);
CREATE INDEX dead_ends_task ON dead_ends (task_id, id);
`,
	// 3: trained bases that later sessions fork from (package fork).
	`
CREATE TABLE bases (
	id               TEXT PRIMARY KEY, -- the agent's conversation id
	task_id          TEXT NOT NULL REFERENCES tasks (id),
	harness          TEXT NOT NULL,
	model            TEXT NOT NULL,
	fingerprint      TEXT NOT NULL, -- JSON session.Launch
	fingerprint_hash TEXT NOT NULL,
	training         TEXT NOT NULL, -- JSON usage.Totals
	created_at       TEXT NOT NULL,
	last_hit_at      TEXT NOT NULL,
	forks            INTEGER NOT NULL,
	retired_at       TEXT NOT NULL
) STRICT;
CREATE INDEX bases_task ON bases (task_id, created_at);
`,
	// 4: when a base last did real work, apart from keep-warm pings.
	`
ALTER TABLE bases ADD COLUMN last_used_at TEXT NOT NULL DEFAULT '';
UPDATE bases SET last_used_at = last_hit_at;
`,
	// 5: usage sums kept with each session.usage event (usage.go).
	migrationUsageTotals,
	// 6: engines and their heartbeats (engines.go).
	`
CREATE TABLE engines (
	id           TEXT PRIMARY KEY,
	host         TEXT NOT NULL,
	pid          INTEGER NOT NULL,
	version      TEXT NOT NULL,
	repo         TEXT NOT NULL,
	slots        INTEGER NOT NULL,
	busy         INTEGER NOT NULL,
	started_at   TEXT NOT NULL,
	heartbeat_at TEXT NOT NULL,
	stopped_at   TEXT NOT NULL
) STRICT;
`,
	// 7: the latest verdict and the models on each task row (summary.go).
	migrationTaskSummary,
	// 8: how another machine reaches each engine (engines.go).
	`
ALTER TABLE engines ADD COLUMN ssh TEXT NOT NULL DEFAULT '';
ALTER TABLE engines ADD COLUMN bin TEXT NOT NULL DEFAULT '';
`,
	// 9: live branch: two tasks that have not ended never share a branch
	// (store.EndedStates; branchTaken names the holder).
	`
CREATE UNIQUE INDEX tasks_live_branch ON tasks (branch)
WHERE branch <> '' AND state NOT IN ('completed', 'failed', 'cancelled', 'merged');
`,
	// 10: review comments: a decision's anchor in the diff (JSON or NULL)
	// and when it was resolved (decisions.go).
	`
ALTER TABLE decisions ADD COLUMN anchor TEXT;
ALTER TABLE decisions ADD COLUMN resolved_at TEXT NOT NULL DEFAULT '';
`,
	// 11: the fleet key's signature of each task (signature.go).
	migrationSignature,
	// 12: how far each forge source has read each list (cursor.go;
	// times in milliseconds, as store/sqlq binds them).
	`
CREATE TABLE source_cursors (
	source   TEXT NOT NULL,
	what     TEXT NOT NULL,
	since_ms INTEGER NOT NULL,
	ref      INTEGER NOT NULL,
	PRIMARY KEY (source, what)
) STRICT;
`,
	// 13: the lower-bound mark of the usage sums (usage.go).
	migrationUsageLowerBound,
	// 14: an engine that stopped keeping its agents for the next
	// (engines.go).
	`
ALTER TABLE engines ADD COLUMN kept INTEGER NOT NULL DEFAULT 0;
`,
}

// migrateTo brings the database to schema version target in one IMMEDIATE
// transaction, so two processes opening a new file at once cannot both run a
// step: the second waits, then finds the work done. It re-checks the header
// under the lock because the file may have changed since inspect looked.
func migrateTo(ctx context.Context, db *sql.DB, abs string, target int) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open store %s: %w", abs, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	h, err := readHeader(ctx, tx)
	if err != nil {
		return fmt.Errorf("open store %s: read its header: %w", abs, err)
	}
	if err := h.check(abs); err != nil {
		return err
	}
	if h.appID != applicationID {
		h.version = 0 // an empty database we adopt; its user_version is not ours
	}
	if h.version >= target {
		return tx.Rollback()
	}
	for v := h.version; v < target; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("open store %s: migrate schema to version %d: %w", abs, v+1, err)
		}
	}
	// PRAGMA takes no bound parameters; both values are integers we control.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return fmt.Errorf("open store %s: %w", abs, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", target)); err != nil {
		return fmt.Errorf("open store %s: %w", abs, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("open store %s: commit migration: %w", abs, err)
	}
	return nil
}
