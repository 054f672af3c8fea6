package sqlite

// migrationUsageTotals keeps usage sums per task, phase and model, written
// with each session.usage event (sqlq.AddUsage), and fills them from the ledger
// of a store made before it.
const migrationUsageTotals = `
CREATE TABLE usage_totals (
	task_id        TEXT NOT NULL,
	phase          TEXT NOT NULL,
	model          TEXT NOT NULL,
	input          INTEGER NOT NULL,
	output         INTEGER NOT NULL,
	cache_creation INTEGER NOT NULL,
	cache_read     INTEGER NOT NULL,
	cost_usd       REAL NOT NULL,
	priced         INTEGER NOT NULL, -- every addend was priced
	PRIMARY KEY (task_id, phase, model)
) STRICT;
INSERT INTO usage_totals
SELECT e.task_id, coalesce(json_extract(e.data, '$.phase'), ''), m.key,
	sum(coalesce(json_extract(m.value, '$.tokens.input'), 0)),
	sum(coalesce(json_extract(m.value, '$.tokens.output'), 0)),
	sum(coalesce(json_extract(m.value, '$.tokens.cache_creation'), 0)),
	sum(coalesce(json_extract(m.value, '$.tokens.cache_read'), 0)),
	sum(coalesce(json_extract(m.value, '$.cost_usd'), 0.0)),
	min(coalesce(json_extract(m.value, '$.priced'), 0))
FROM (SELECT task_id, data FROM events WHERE kind = 'session.usage' AND json_valid(data)
	AND json_type(data, '$.totals.models') = 'object') AS e,
	json_each(e.data, '$.totals.models') AS m
GROUP BY 1, 2, 3;
`

// migrationUsageLowerBound keeps with the sums why they are a lower bound
// (a session whose CLI records some of its requests nowhere), so a
// restarted engine and `status --json` still say so. The ledger's
// session.usage events mark the phases summed before it.
const migrationUsageLowerBound = `
ALTER TABLE usage_totals ADD COLUMN lower_bound TEXT NOT NULL DEFAULT '';
UPDATE usage_totals SET lower_bound = coalesce((SELECT json_extract(e.data, '$.lower_bound') FROM events e
	WHERE e.kind = 'session.usage' AND e.task_id = usage_totals.task_id AND json_valid(e.data)
	AND coalesce(json_extract(e.data, '$.phase'), '') = usage_totals.phase
	AND json_type(e.data, '$.lower_bound') = 'text' AND json_extract(e.data, '$.lower_bound') <> ''
	ORDER BY e.seq DESC LIMIT 1), '');
`
