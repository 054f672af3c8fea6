package sqlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const leaseColumns = `task_id, holder, token, granted_at, deadline, renewals, baseline,
last_progress_at, last_decision, last_reason`

// LeaseGrant gives the task the next fencing token, stores the lease and
// moves the task to leased: the ActLease transition, guarded by
// p.ExpectState. The new lease counts its progress clock from the grant.
func (o Transitions) LeaseGrant(ctx context.Context, p store.LeaseGrantParams) (lease.Lease, error) {
	res, err := o.TaskTransition(ctx, p.Transition())
	if err != nil {
		return lease.Lease{}, err
	}
	return res.Lease, nil
}

// LeaseClaim grants a lease on the first of p.Candidates still queued,
// through the same transition as TaskTransition; which statements find it
// is the dialect's (firstQueued).
func (o Transitions) LeaseClaim(ctx context.Context, p store.LeaseClaimParams) (store.TaskTransitionResult, error) {
	if len(p.Candidates) == 0 {
		return store.TaskTransitionResult{}, fmt.Errorf("claim a task: no candidates: %w", store.ErrNotFound)
	}
	var res store.TaskTransitionResult
	err := o.D.Write(ctx, func(tx Tx) error {
		q, tries := tx.Dialect().firstQueued(p.Candidates)
		for _, args := range tries {
			var token int64
			t, err := ScanTask(tx.QueryRow(ctx, q, args...), &token)
			if errors.Is(err, ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("claim a task: %w", err)
			}
			res, err = transition(ctx, tx, p.Transition(t.ID), t, token)
			return err
		}
		return fmt.Errorf("claim a task: none of the candidates is queued: %w", store.ErrNotFound)
	})
	if err != nil {
		return store.TaskTransitionResult{}, err
	}
	return res, nil
}

// claimColumns are the TaskColumns and the token of the tasks table joined
// to the candidates.
var claimColumns = prefixed("tasks.", TaskColumns) + `, tasks.token`

// firstQueued is the statement that reads the first of ids still queued,
// with its token, and the arguments of each try of it, in order; the first
// try that finds a row has the task to claim.
//
// On PostgreSQL it is one statement over all of ids, the candidates joined
// as a table (a hash join, not = ANY tested on every queued row, which
// costs queued × candidates), the row taken FOR UPDATE SKIP LOCKED: a task
// another transaction holds is passed over, never waited for. On SQLite,
// which has one writer at a time, it is each candidate in turn.
func (d Dialect) firstQueued(ids []task.ID) (string, [][]any) {
	queued := string(task.StateQueued)
	if d == Postgres {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = string(id)
		}
		return `SELECT ` + claimColumns + `
FROM tasks JOIN unnest(?::text[]) WITH ORDINALITY AS c(id, n) ON tasks.id = c.id
WHERE tasks.state = ? ORDER BY c.n LIMIT 1 FOR UPDATE OF tasks SKIP LOCKED`, [][]any{{s, queued}}
	}
	tries := make([][]any, len(ids))
	for i, id := range ids {
		tries[i] = []any{string(id), queued}
	}
	return `SELECT ` + TaskColumns + `, token FROM tasks WHERE id = ? AND state = ?`, tries
}

// prefixed qualifies every column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// LeaseGet returns the task's lease, or store.ErrNotFound when it has none.
func (o Transitions) LeaseGet(ctx context.Context, taskID task.ID) (lease.Lease, error) {
	return get(ctx, o.D.Reads(), "lease of task "+string(taskID), scanLease,
		`SELECT `+leaseColumns+` FROM leases WHERE task_id = ?`, string(taskID))
}

// LeaseUpdate writes a renewed or annotated lease and its events when its
// token is still the task's current one; store.ErrStaleToken otherwise, and
// store.ErrNotFound when the lease was deleted.
func (o Transitions) LeaseUpdate(ctx context.Context, p store.LeaseUpdateParams) error {
	l := p.Lease
	return write(ctx, o.D, p.Events, func(tx Tx) error {
		if err := leaseFence(ctx, tx, "update", l.TaskID, l.Token); err != nil {
			return err
		}
		return upsertLease(ctx, tx, l)
	})
}

// LeaseDelete removes the task's lease if it still carries token;
// store.ErrStaleToken when another grant replaced it, store.ErrNotFound when
// there is none. The task keeps its token so the next grant is larger.
func (o Transitions) LeaseDelete(ctx context.Context, taskID task.ID, token int64) error {
	return o.D.Write(ctx, func(tx Tx) error {
		if err := leaseFence(ctx, tx, "delete", taskID, token); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE task_id = ?`, string(taskID)); err != nil {
			return fmt.Errorf("delete lease of task %s: %w", taskID, err)
		}
		return nil
	})
}

// LeaseList returns every stored lease, by task id.
func (o Transitions) LeaseList(ctx context.Context) ([]lease.Lease, error) {
	return list(ctx, o.D.Reads(), "leases", scanLease, `SELECT `+leaseColumns+` FROM leases ORDER BY task_id`)
}

// leaseFence checks, inside a write, that token is the task's current token
// and that a lease row for it exists.
func leaseFence(ctx context.Context, tx Tx, verb string, taskID task.ID, token int64) error {
	_, current, err := taskGuard(ctx, tx, taskID)
	if err != nil {
		return err
	}
	if token != current {
		return fmt.Errorf("%s lease of task %s: token %d is not the current %d: %w", verb, taskID, token, current, store.ErrStaleToken)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM leases WHERE task_id = ? AND token = ?`,
		string(taskID), token).Scan(&n); err != nil {
		return fmt.Errorf("%s lease of task %s: %w", verb, taskID, err)
	}
	if n == 0 {
		return fmt.Errorf("%s lease of task %s: %w", verb, taskID, store.ErrNotFound)
	}
	return nil
}

func upsertLease(ctx context.Context, tx Tx, l lease.Lease) error {
	b := l.Baseline
	b.At = b.At.UTC()
	baseline, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("store lease of task %s: %w", l.TaskID, err)
	}
	d := tx.Dialect()
	_, err = tx.Exec(ctx, `INSERT INTO leases (`+leaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (task_id) DO UPDATE SET holder = excluded.holder, token = excluded.token,
granted_at = excluded.granted_at, deadline = excluded.deadline, renewals = excluded.renewals,
baseline = excluded.baseline, last_progress_at = excluded.last_progress_at,
last_decision = excluded.last_decision, last_reason = excluded.last_reason`,
		string(l.TaskID), l.Holder, l.Token, d.Time(l.GrantedAt), d.Time(l.Deadline), l.Renewals,
		string(baseline), d.Time(l.LastProgressAt), l.LastDecision, string(l.LastReason))
	if err != nil {
		return fmt.Errorf("store lease of task %s: %w", l.TaskID, err)
	}
	return nil
}

func scanLease(row Row) (lease.Lease, error) {
	var (
		l                        lease.Lease
		taskID, baseline, reason string
	)
	err := row.Scan(&taskID, &l.Holder, &l.Token, At(&l.GrantedAt), At(&l.Deadline), &l.Renewals, &baseline,
		At(&l.LastProgressAt), &l.LastDecision, &reason)
	if err != nil {
		return l, err
	}
	l.TaskID, l.LastReason = task.ID(taskID), task.Reason(reason)
	if err := json.Unmarshal([]byte(baseline), &l.Baseline); err != nil {
		return l, fmt.Errorf("lease of task %s baseline: %w", taskID, err)
	}
	l.Baseline.At = l.Baseline.At.UTC()
	return l, nil
}
