package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const leaseColumns = `task_id, holder, token, granted_at, deadline, renewals, baseline,
last_progress_at, last_decision, last_reason`

// LeaseGrant gives the task the next fencing token, stores the lease and
// moves the task to leased: the ActLease transition, guarded by
// p.ExpectState. The new lease counts its progress clock from the grant.
func (s *Store) LeaseGrant(ctx context.Context, p store.LeaseGrantParams) (lease.Lease, error) {
	res, err := s.TaskTransition(ctx, p.Transition())
	if err != nil {
		return lease.Lease{}, err
	}
	return res.Lease, nil
}

// LeaseClaim grants a lease on the first of p.Candidates still queued. The
// row is taken FOR UPDATE SKIP LOCKED: a task another transaction holds is
// passed over, never waited for.
func (s *Store) LeaseClaim(ctx context.Context, p store.LeaseClaimParams) (store.TaskTransitionResult, error) {
	if len(p.Candidates) == 0 {
		return store.TaskTransitionResult{}, fmt.Errorf("claim a task: no candidates: %w", store.ErrNotFound)
	}
	ids := make([]string, len(p.Candidates))
	for i, id := range p.Candidates {
		ids[i] = string(id)
	}
	var res store.TaskTransitionResult
	err := s.write(ctx, func(tx pgx.Tx) error {
		var token int64
		// The candidates are joined as a table (a hash join), not tested
		// with = ANY on every queued row, which costs queued × candidates.
		t, err := scanTaskToken(tx.QueryRow(ctx, `SELECT `+prefixed("tasks.", taskColumns)+`, tasks.token
FROM tasks JOIN unnest($1::text[]) WITH ORDINALITY AS c(id, n) ON tasks.id = c.id
WHERE tasks.state = $2 ORDER BY c.n LIMIT 1 FOR UPDATE OF tasks SKIP LOCKED`,
			ids, string(task.StateQueued)), &token)
		if err != nil {
			return notFound(err, "claim a task: none of the candidates is queued")
		}
		res, err = transition(ctx, tx, p.Transition(t.ID), t, token)
		return err
	})
	if err != nil {
		return store.TaskTransitionResult{}, err
	}
	return res, nil
}

// LeaseGet returns the task's lease, or store.ErrNotFound when it has none.
func (s *Store) LeaseGet(ctx context.Context, taskID task.ID) (lease.Lease, error) {
	l, err := scanLease(s.pool.QueryRow(ctx, `SELECT `+leaseColumns+` FROM leases WHERE task_id = $1`, string(taskID)))
	if err != nil {
		return lease.Lease{}, notFound(err, "lease of task "+string(taskID))
	}
	return l, nil
}

// LeaseUpdate writes a renewed or annotated lease and its events when its
// token is still the task's current one.
func (s *Store) LeaseUpdate(ctx context.Context, p store.LeaseUpdateParams) error {
	l := p.Lease
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := leaseFence(ctx, tx, "update", l.TaskID, l.Token); err != nil {
			return err
		}
		if err := upsertLease(ctx, tx, l); err != nil {
			return err
		}
		return appendEvents(ctx, tx, p.Events)
	})
}

// LeaseDelete removes the task's lease if it still carries token.
func (s *Store) LeaseDelete(ctx context.Context, taskID task.ID, token int64) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := leaseFence(ctx, tx, "delete", taskID, token); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE task_id = $1`, string(taskID)); err != nil {
			return fmt.Errorf("delete lease of task %s: %w", taskID, err)
		}
		return nil
	})
}

// LeaseList returns every stored lease, by task id.
func (s *Store) LeaseList(ctx context.Context) ([]lease.Lease, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+leaseColumns+` FROM leases ORDER BY task_id`)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	out, err := collect(rows, scanLease)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return out, nil
}

// leaseFence checks, inside a write, that token is the task's current token
// and that a lease row for it exists.
func leaseFence(ctx context.Context, tx pgx.Tx, verb string, taskID task.ID, token int64) error {
	_, current, err := taskGuard(ctx, tx, taskID)
	if err != nil {
		return err
	}
	if token != current {
		return fmt.Errorf("%s lease of task %s: token %d is not the current %d: %w", verb, taskID, token, current, store.ErrStaleToken)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM leases WHERE task_id = $1 AND token = $2`,
		string(taskID), token).Scan(&n); err != nil {
		return fmt.Errorf("%s lease of task %s: %w", verb, taskID, err)
	}
	if n == 0 {
		return fmt.Errorf("%s lease of task %s: %w", verb, taskID, store.ErrNotFound)
	}
	return nil
}

func upsertLease(ctx context.Context, tx pgx.Tx, l lease.Lease) error {
	b := l.Baseline
	b.At = b.At.UTC()
	baseline, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("store lease of task %s: %w", l.TaskID, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO leases (`+leaseColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (task_id) DO UPDATE SET holder = excluded.holder, token = excluded.token,
granted_at = excluded.granted_at, deadline = excluded.deadline, renewals = excluded.renewals,
baseline = excluded.baseline, last_progress_at = excluded.last_progress_at,
last_decision = excluded.last_decision, last_reason = excluded.last_reason`,
		string(l.TaskID), l.Holder, l.Token, l.GrantedAt.UTC(), l.Deadline.UTC(), l.Renewals,
		string(baseline), l.LastProgressAt.UTC(), l.LastDecision, string(l.LastReason))
	if err != nil {
		return fmt.Errorf("store lease of task %s: %w", l.TaskID, err)
	}
	return nil
}

func scanLease(row pgx.Row) (lease.Lease, error) {
	var (
		l                        lease.Lease
		taskID, baseline, reason string
	)
	err := row.Scan(&taskID, &l.Holder, &l.Token, &l.GrantedAt, &l.Deadline, &l.Renewals, &baseline,
		&l.LastProgressAt, &l.LastDecision, &reason)
	if err != nil {
		return l, err
	}
	l.TaskID, l.LastReason = task.ID(taskID), task.Reason(reason)
	l.GrantedAt, l.Deadline, l.LastProgressAt = l.GrantedAt.UTC(), l.Deadline.UTC(), l.LastProgressAt.UTC()
	if err := json.Unmarshal([]byte(baseline), &l.Baseline); err != nil {
		return l, fmt.Errorf("lease of task %s baseline: %w", taskID, err)
	}
	l.Baseline.At = l.Baseline.At.UTC()
	return l, nil
}

// prefixed qualifies every column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
