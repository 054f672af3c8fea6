package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlq"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// migrationTaskSummary keeps on every task row what the task list and
// `status` show besides the task itself: its latest verdict (without the
// output tail) and the models its sessions ran. Triggers write them in the
// transaction that inserts the verdict or the session, whichever write
// does it (an import too), so TaskSummaries is one scan of one table, with
// no subquery and no JSON per task. The step fills them for the tasks of an
// older store. It also indexes the sessions still recorded as live.
const migrationTaskSummary = `
ALTER TABLE tasks ADD COLUMN models TEXT NOT NULL DEFAULT ''; -- distinct session models, first run first, joined by char(31)
ALTER TABLE tasks ADD COLUMN verdict_status TEXT NOT NULL DEFAULT ''; -- '' before the first verify run
ALTER TABLE tasks ADD COLUMN verdict_command TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN verdict_exit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN verdict_passed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN verdict_failed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN verdict_skipped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN verdict_counted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN verdict_output INTEGER NOT NULL DEFAULT 0; -- output_bytes
ALTER TABLE tasks ADD COLUMN verdict_detail TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN verdict_duration INTEGER NOT NULL DEFAULT 0; -- nanoseconds
ALTER TABLE tasks ADD COLUMN verdict_at TEXT NOT NULL DEFAULT ''; -- RFC 3339, as in the verdict's JSON

-- The sessions a starting engine checks: few, however long the history.
CREATE INDEX sessions_live ON sessions (started_at, id) WHERE status IN ('launching', 'confirmed');

CREATE TRIGGER verdicts_summary AFTER INSERT ON verdicts BEGIN
	UPDATE tasks SET
		verdict_status = NEW.status,
		verdict_command = coalesce(json_extract(NEW.verdict, '$.command'), ''),
		verdict_exit = coalesce(json_extract(NEW.verdict, '$.exit_code'), 0),
		verdict_passed = coalesce(json_extract(NEW.verdict, '$.passed'), 0),
		verdict_failed = coalesce(json_extract(NEW.verdict, '$.failed'), 0),
		verdict_skipped = coalesce(json_extract(NEW.verdict, '$.skipped'), 0),
		verdict_counted = coalesce(json_extract(NEW.verdict, '$.counted'), 0),
		verdict_output = coalesce(json_extract(NEW.verdict, '$.output_bytes'), 0),
		verdict_detail = coalesce(json_extract(NEW.verdict, '$.detail'), ''),
		verdict_duration = coalesce(json_extract(NEW.verdict, '$.duration'), 0),
		verdict_at = coalesce(json_extract(NEW.verdict, '$.at'), '')
	WHERE id = NEW.task_id;
END;

CREATE TRIGGER sessions_models_insert AFTER INSERT ON sessions WHEN NEW.model != '' BEGIN
	UPDATE tasks SET models = (` + modelsOfTask + `) WHERE id = NEW.task_id;
END;
CREATE TRIGGER sessions_models_update AFTER UPDATE OF model, started_at ON sessions BEGIN
	UPDATE tasks SET models = (` + modelsOfTask + `) WHERE id = NEW.task_id;
END;

UPDATE tasks SET models = (` + modelsOfTaskID + `);
UPDATE tasks SET (verdict_status, verdict_command, verdict_exit, verdict_passed, verdict_failed, verdict_skipped,
	verdict_counted, verdict_output, verdict_detail, verdict_duration, verdict_at) =
	(SELECT v.status,
		coalesce(json_extract(v.verdict, '$.command'), ''),
		coalesce(json_extract(v.verdict, '$.exit_code'), 0),
		coalesce(json_extract(v.verdict, '$.passed'), 0),
		coalesce(json_extract(v.verdict, '$.failed'), 0),
		coalesce(json_extract(v.verdict, '$.skipped'), 0),
		coalesce(json_extract(v.verdict, '$.counted'), 0),
		coalesce(json_extract(v.verdict, '$.output_bytes'), 0),
		coalesce(json_extract(v.verdict, '$.detail'), ''),
		coalesce(json_extract(v.verdict, '$.duration'), 0),
		coalesce(json_extract(v.verdict, '$.at'), '')
	FROM verdicts v WHERE v.task_id = tasks.id ORDER BY v.id DESC LIMIT 1)
WHERE EXISTS (SELECT 1 FROM verdicts v WHERE v.task_id = tasks.id);
`

// modelsOfTask is the models column of NEW.task_id's row, from its
// sessions: distinct non-empty models in the order they first ran.
const modelsOfTask = `coalesce((SELECT group_concat(model, char(31)) FROM (SELECT s.model, min(s.started_at) AS first
	FROM sessions s WHERE s.task_id = NEW.task_id AND s.model != '' GROUP BY s.model ORDER BY first)), '')`

// modelsOfTaskID is modelsOfTask for the row being updated.
const modelsOfTaskID = `coalesce((SELECT group_concat(model, char(31)) FROM (SELECT s.model, min(s.started_at) AS first
	FROM sessions s WHERE s.task_id = tasks.id AND s.model != '' GROUP BY s.model ORDER BY first)), '')`

// summaryColumns follow taskColumns in TaskSummaries.
const summaryColumns = `models, verdict_status, verdict_command, verdict_exit, verdict_passed, verdict_failed,
verdict_skipped, verdict_counted, verdict_output, verdict_detail, verdict_duration, verdict_at`

// modelSep separates models in the models column; no model id holds it.
const modelSep = "\x1f"

// TaskSummaries returns every task with its latest verdict (without its
// output tail, which VerdictList has) and its sessions' models, oldest
// first, in one scan of the tasks table.
func (s *Store) TaskSummaries(ctx context.Context) ([]store.TaskSummary, error) {
	// Sized once: growing ten thousand summaries by appending copied them
	// over and over.
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM tasks`).Scan(&n); err != nil {
		return nil, fmt.Errorf("count tasks: %w", err)
	}
	// Read in the table's order and sorted here, as in TaskStatusList.
	rows, err := s.r.QueryContext(ctx, `SELECT `+taskColumns+`, `+summaryColumns+` FROM tasks`)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	out := make([]store.TaskSummary, 0, n)
	for rows.Next() {
		var (
			models, status, at string
			v                  task.Verdict
			duration           int64
		)
		t, err := scanTask(sqlq.WithExtra{Row: rows, Extra: []any{&models, &status, &v.Command, &v.ExitCode, &v.Passed, &v.Failed,
			&v.Skipped, &v.Counted, &v.OutputBytes, &v.Detail, &duration, &at}})
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		sum := store.TaskSummary{Task: t}
		if status != "" {
			v.Status, v.Duration = task.VerdictStatus(status), time.Duration(duration)
			if at != "" {
				if v.At, err = time.Parse(time.RFC3339Nano, at); err != nil {
					return nil, fmt.Errorf("list tasks: verdict time of %s: %w", t.ID, err)
				}
				v.At = v.At.UTC()
			}
			sum.Verdict = &v
		}
		if models != "" {
			sum.Models = strings.Split(models, modelSep)
		}
		out = append(out, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	slices.SortStableFunc(out, func(a, b store.TaskSummary) int {
		if c := a.Task.CreatedAt.Compare(b.Task.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(string(a.Task.ID), string(b.Task.ID))
	})
	return out, nil
}

// TaskStatusList returns every task's status line, oldest first: a few
// columns of one table, read in the index's order.
func (s *Store) TaskStatusList(ctx context.Context) ([]store.TaskStatus, error) {
	// The table is read in its own order and sorted here: in this driver
	// that costs half of an ordered read through an index, whose every row
	// is a second lookup.
	rows, err := s.r.QueryContext(ctx, `SELECT id, title, state, phase, attempt, reason, verdict_status,
verdict_passed, verdict_failed, verdict_skipped, verdict_counted, verdict_detail, created_at FROM tasks`)
	if err != nil {
		return nil, fmt.Errorf("list task status: %w", err)
	}
	defer rows.Close()
	var (
		out     []store.TaskStatus
		created []string
	)
	for rows.Next() {
		var (
			ts                         store.TaskStatus
			id, state, phase, vst, cat string
			v                          task.Verdict
		)
		if err := rows.Scan(&id, &ts.Title, &state, &phase, &ts.Attempt, &ts.Reason, &vst,
			&v.Passed, &v.Failed, &v.Skipped, &v.Counted, &v.Detail, &cat); err != nil {
			return nil, fmt.Errorf("list task status: %w", err)
		}
		created = append(created, cat)
		ts.ID, ts.State, ts.Phase = task.ID(id), task.State(state), task.Phase(phase)
		if vst != "" {
			v.Status = task.VerdictStatus(vst)
			ts.Verdict = &v
		}
		out = append(out, ts)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list task status: %w", err)
	}
	sortByCreation(out, created, func(t store.TaskStatus) task.ID { return t.ID })
	return out, nil
}

// sortByCreation sorts rows read in table order into the order of the
// tasks' creation times (created, fixed-width text, parallel to rows), then
// ids, as ORDER BY created_at, id would.
func sortByCreation[T any](rows []T, created []string, id func(T) task.ID) {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if created[i] != created[j] {
			return created[i] < created[j]
		}
		return id(rows[i]) < id(rows[j])
	})
	sorted := make([]T, len(rows))
	for k, i := range idx {
		sorted[k] = rows[i]
	}
	copy(rows, sorted)
}
