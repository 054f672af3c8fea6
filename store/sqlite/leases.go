package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

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

// LeaseClaim grants a lease on the first of p.Candidates still queued,
// through the same transition as TaskTransition. SQLite has one writer at
// a time, so the claim is simply the first queued candidate read inside the
// write transaction.
func (s *Store) LeaseClaim(ctx context.Context, p store.LeaseClaimParams) (store.TaskTransitionResult, error) {
	var res store.TaskTransitionResult
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, id := range p.Candidates {
			var token int64
			t, err := scanTaskToken(tx.QueryRowContext(ctx, `SELECT `+taskColumns+`, token FROM tasks WHERE id = ? AND state = ?`,
				string(id), string(task.StateQueued)), &token)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("claim task %s: %w", id, err)
			}
			res, err = s.transition(ctx, tx, p.Transition(id), t, token)
			return err
		}
		return fmt.Errorf("claim a task: none of the candidates is queued: %w", store.ErrNotFound)
	})
	if err != nil {
		return store.TaskTransitionResult{}, err
	}
	return res, nil
}

// LeaseGet returns the task's lease, or store.ErrNotFound when it has none.
func (s *Store) LeaseGet(ctx context.Context, taskID task.ID) (lease.Lease, error) {
	l, err := scanLease(s.r.QueryRowContext(ctx, `SELECT `+leaseColumns+` FROM leases WHERE task_id = ?`, string(taskID)))
	if errors.Is(err, sql.ErrNoRows) {
		return lease.Lease{}, fmt.Errorf("lease of task %s: %w", taskID, store.ErrNotFound)
	}
	if err != nil {
		return lease.Lease{}, fmt.Errorf("get lease of task %s: %w", taskID, err)
	}
	return l, nil
}

// LeaseUpdate writes a renewed or annotated lease and its events when its
// token is still the task's current one; store.ErrStaleToken otherwise, and
// store.ErrNotFound when the lease was deleted.
func (s *Store) LeaseUpdate(ctx context.Context, p store.LeaseUpdateParams) error {
	l := p.Lease
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := leaseFence(ctx, tx, "update", l.TaskID, l.Token); err != nil {
			return err
		}
		if err := upsertLease(ctx, tx, l); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, p.Events)
	})
}

// LeaseDelete removes the task's lease if it still carries token;
// store.ErrStaleToken when another grant replaced it, store.ErrNotFound when
// there is none. The task keeps its token so the next grant is larger.
func (s *Store) LeaseDelete(ctx context.Context, taskID task.ID, token int64) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := leaseFence(ctx, tx, "delete", taskID, token); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE task_id = ?`, string(taskID)); err != nil {
			return fmt.Errorf("delete lease of task %s: %w", taskID, err)
		}
		return nil
	})
}

// LeaseList returns every stored lease, by task id.
func (s *Store) LeaseList(ctx context.Context) ([]lease.Lease, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+leaseColumns+` FROM leases ORDER BY task_id`)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	defer rows.Close()
	var out []lease.Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, fmt.Errorf("list leases: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return out, nil
}

// leaseFence checks, inside a write, that token is the task's current token
// and that a lease row for it exists.
func leaseFence(ctx context.Context, tx *sql.Tx, verb string, taskID task.ID, token int64) error {
	_, current, err := taskGuard(ctx, tx, taskID)
	if err != nil {
		return err
	}
	if token != current {
		return fmt.Errorf("%s lease of task %s: token %d is not the current %d: %w", verb, taskID, token, current, store.ErrStaleToken)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM leases WHERE task_id = ? AND token = ?`,
		string(taskID), token).Scan(&n); err != nil {
		return fmt.Errorf("%s lease of task %s: %w", verb, taskID, err)
	}
	if n == 0 {
		return fmt.Errorf("%s lease of task %s: %w", verb, taskID, store.ErrNotFound)
	}
	return nil
}

func upsertLease(ctx context.Context, tx *sql.Tx, l lease.Lease) error {
	b := l.Baseline
	b.At = b.At.UTC()
	baseline, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("store lease of task %s: %w", l.TaskID, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO leases (`+leaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (task_id) DO UPDATE SET holder = excluded.holder, token = excluded.token,
granted_at = excluded.granted_at, deadline = excluded.deadline, renewals = excluded.renewals,
baseline = excluded.baseline, last_progress_at = excluded.last_progress_at,
last_decision = excluded.last_decision, last_reason = excluded.last_reason`,
		string(l.TaskID), l.Holder, l.Token, timeText(l.GrantedAt), timeText(l.Deadline), l.Renewals,
		string(baseline), timeText(l.LastProgressAt), l.LastDecision, string(l.LastReason))
	if err != nil {
		return fmt.Errorf("store lease of task %s: %w", l.TaskID, err)
	}
	return nil
}

func scanLease(sc scanner) (lease.Lease, error) {
	var (
		l                                   lease.Lease
		taskID, granted, deadline, baseline string
		progress, reason                    string
	)
	err := sc.Scan(&taskID, &l.Holder, &l.Token, &granted, &deadline, &l.Renewals, &baseline,
		&progress, &l.LastDecision, &reason)
	if err != nil {
		return l, err
	}
	l.TaskID, l.LastReason = task.ID(taskID), task.Reason(reason)
	if err := json.Unmarshal([]byte(baseline), &l.Baseline); err != nil {
		return l, fmt.Errorf("lease of task %s baseline: %w", taskID, err)
	}
	l.Baseline.At = l.Baseline.At.UTC()
	if l.GrantedAt, err = parseTime(granted); err != nil {
		return l, err
	}
	if l.Deadline, err = parseTime(deadline); err != nil {
		return l, err
	}
	if l.LastProgressAt, err = parseTime(progress); err != nil {
		return l, err
	}
	return l, nil
}
