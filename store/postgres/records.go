package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// DecisionInsert stores a human correction and its events.
func (s *Store) DecisionInsert(ctx context.Context, d store.Decision, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := insertDecision(ctx, tx, d); err != nil {
			return err
		}
		return appendEvents(ctx, tx, events)
	})
}

func insertDecision(ctx context.Context, tx pgx.Tx, d store.Decision) error {
	var anchor *string
	if d.Anchor != nil {
		b, err := json.Marshal(d.Anchor)
		if err != nil {
			return fmt.Errorf("encode the anchor of decision %s: %w", d.ID, err)
		}
		s := string(b)
		anchor = &s
	}
	var resolved *time.Time
	if !d.ResolvedAt.IsZero() {
		r := d.ResolvedAt.UTC()
		resolved = &r
	}
	_, err := tx.Exec(ctx, `INSERT INTO decisions (id, task_id, text, author, at, anchor, resolved_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		d.ID, string(d.TaskID), d.Text, d.Author, d.At.UTC(), anchor, resolved)
	if err != nil {
		return fmt.Errorf("insert decision %s for task %s: %w", d.ID, d.TaskID, err)
	}
	return nil
}

// DecisionList returns a task's decisions, oldest first.
func (s *Store) DecisionList(ctx context.Context, taskID task.ID) ([]store.Decision, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, task_id, text, author, at, anchor, resolved_at FROM decisions
WHERE task_id = $1 ORDER BY at, id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list decisions of task %s: %w", taskID, err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.Decision, error) {
		var d store.Decision
		var tid string
		var anchor *string
		var resolved *time.Time
		if err := row.Scan(&d.ID, &tid, &d.Text, &d.Author, &d.At, &anchor, &resolved); err != nil {
			return d, err
		}
		d.TaskID, d.At = task.ID(tid), d.At.UTC()
		if resolved != nil {
			d.ResolvedAt = resolved.UTC()
		}
		var err error
		if anchor != nil {
			d.Anchor, err = store.ParseAnchor(*anchor)
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list decisions of task %s: %w", taskID, err)
	}
	return out, nil
}

// DeliveryInsert records that a decision reached a session, with its events.
// It reports false and writes nothing when that delivery is already stored.
func (s *Store) DeliveryInsert(ctx context.Context, d store.Delivery, events ...task.Event) (bool, error) {
	inserted := false
	err := s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO deliveries (decision_id, session_id, at) VALUES ($1, $2, $3)
ON CONFLICT (decision_id, session_id) DO NOTHING`, d.DecisionID, d.SessionID, d.At.UTC())
		if err != nil {
			return fmt.Errorf("insert delivery of decision %s to session %s: %w", d.DecisionID, d.SessionID, err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		inserted = true
		return appendEvents(ctx, tx, events)
	})
	if err != nil {
		return false, err
	}
	return inserted, nil
}

// DeliveryList returns the deliveries of a task's decisions, oldest first.
func (s *Store) DeliveryList(ctx context.Context, taskID task.ID) ([]store.Delivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT dl.decision_id, dl.session_id, dl.at
FROM deliveries dl JOIN decisions d ON d.id = dl.decision_id
WHERE d.task_id = $1 ORDER BY dl.at, dl.decision_id, dl.session_id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list deliveries of task %s: %w", taskID, err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.Delivery, error) {
		var d store.Delivery
		err := row.Scan(&d.DecisionID, &d.SessionID, &d.At)
		d.At = d.At.UTC()
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list deliveries of task %s: %w", taskID, err)
	}
	return out, nil
}

// ArtifactSeal records an artifact's content and sha256, fenced by the lease
// token: a session whose lease was taken away cannot seal.
func (s *Store) ArtifactSeal(ctx context.Context, p store.ArtifactSealParams) (store.Artifact, error) {
	sum := sha256.Sum256(p.Content)
	a := store.Artifact{
		TaskID:  p.TaskID,
		Phase:   p.Phase,
		Content: p.Content,
		SHA256:  hex.EncodeToString(sum[:]),
		Session: p.SessionID,
		At:      p.At.UTC(),
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, "seal the "+string(p.Phase)+" artifact", p.TaskID, p.Token); err != nil {
			return err
		}
		if err := insertArtifact(ctx, tx, a, p.Token); err != nil {
			return fmt.Errorf("seal %w", err)
		}
		return appendEvents(ctx, tx, p.Events)
	})
	if err != nil {
		return store.Artifact{}, err
	}
	return a, nil
}

func insertArtifact(ctx context.Context, tx pgx.Tx, a store.Artifact, token int64) error {
	content := a.Content
	if content == nil {
		content = []byte{}
	}
	_, err := tx.Exec(ctx, `INSERT INTO artifacts (task_id, phase, content, sha256, session_id, token, at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, string(a.TaskID), string(a.Phase), content, a.SHA256, a.Session, token, a.At.UTC())
	if err != nil {
		return fmt.Errorf("%s artifact of task %s: %w", a.Phase, a.TaskID, err)
	}
	return nil
}

// ArtifactList returns a task's sealed artifacts in sealing order.
func (s *Store) ArtifactList(ctx context.Context, taskID task.ID) ([]store.Artifact, error) {
	rows, err := s.pool.Query(ctx, `SELECT task_id, phase, content, sha256, session_id, at FROM artifacts
WHERE task_id = $1 ORDER BY id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list artifacts of task %s: %w", taskID, err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.Artifact, error) {
		var a store.Artifact
		var tid, phase string
		err := row.Scan(&tid, &phase, &a.Content, &a.SHA256, &a.Session, &a.At)
		a.TaskID, a.Phase, a.At = task.ID(tid), task.Phase(phase), a.At.UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("list artifacts of task %s: %w", taskID, err)
	}
	return out, nil
}

// VerdictInsert stores one verify run and its events.
func (s *Store) VerdictInsert(ctx context.Context, v store.VerdictRecord, events ...task.Event) error {
	verdict := v.Verdict
	verdict.At = verdict.At.UTC()
	body, err := json.Marshal(verdict)
	if err != nil {
		return fmt.Errorf("insert verdict for task %s: %w", v.TaskID, err)
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		if v.Token != 0 {
			if err := fence(ctx, tx, "record a verdict", v.TaskID, v.Token); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO verdicts (task_id, session_id, phase, status, verdict, at)
VALUES ($1, $2, $3, $4, $5, $6)`, string(v.TaskID), v.SessionID, string(v.Phase), string(verdict.Status),
			string(body), verdict.At)
		if err != nil {
			return fmt.Errorf("insert verdict for task %s: %w", v.TaskID, err)
		}
		return appendEvents(ctx, tx, events)
	})
}

// VerdictList returns a task's verify runs in the order they were stored.
func (s *Store) VerdictList(ctx context.Context, taskID task.ID) ([]store.VerdictRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT task_id, session_id, phase, verdict FROM verdicts
WHERE task_id = $1 ORDER BY id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list verdicts of task %s: %w", taskID, err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.VerdictRecord, error) {
		var v store.VerdictRecord
		var tid, phase, body string
		if err := row.Scan(&tid, &v.SessionID, &phase, &body); err != nil {
			return v, err
		}
		v.TaskID, v.Phase = task.ID(tid), task.Phase(phase)
		if err := json.Unmarshal([]byte(body), &v.Verdict); err != nil {
			return v, err
		}
		v.Verdict.At = v.Verdict.At.UTC()
		return v, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list verdicts of task %s: %w", taskID, err)
	}
	return out, nil
}

// DeadEndInsert stores an approach that failed, and its events.
func (s *Store) DeadEndInsert(ctx context.Context, d store.DeadEnd, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := insertDeadEnd(ctx, tx, d); err != nil {
			return err
		}
		return appendEvents(ctx, tx, events)
	})
}

func insertDeadEnd(ctx context.Context, tx pgx.Tx, d store.DeadEnd) error {
	_, err := tx.Exec(ctx, `INSERT INTO dead_ends (task_id, phase, attempt, text, at) VALUES ($1, $2, $3, $4, $5)`,
		string(d.TaskID), string(d.Phase), d.Attempt, d.Text, d.At.UTC())
	if err != nil {
		return fmt.Errorf("insert dead end for task %s: %w", d.TaskID, err)
	}
	return nil
}

// DeadEndList returns a task's dead ends in the order they were stored.
func (s *Store) DeadEndList(ctx context.Context, taskID task.ID) ([]store.DeadEnd, error) {
	rows, err := s.pool.Query(ctx, `SELECT task_id, phase, attempt, text, at FROM dead_ends
WHERE task_id = $1 ORDER BY id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list dead ends of task %s: %w", taskID, err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.DeadEnd, error) {
		var d store.DeadEnd
		var tid, phase string
		err := row.Scan(&tid, &phase, &d.Attempt, &d.Text, &d.At)
		d.TaskID, d.Phase, d.At = task.ID(tid), task.Phase(phase), d.At.UTC()
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list dead ends of task %s: %w", taskID, err)
	}
	return out, nil
}

// TaskImport stores a new task with its history in one transaction.
// Imported artifacts carry lease token 0: they were sealed elsewhere, under
// a lease this store never granted.
func (s *Store) TaskImport(ctx context.Context, p store.TaskImportParams) error {
	if err := p.Check(); err != nil {
		return err
	}
	id := p.Task.ID
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := insertTask(ctx, tx, p.Task); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		for _, ss := range p.Sessions {
			if err := insertSession(ctx, tx, ss); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, a := range p.Artifacts {
			sum := sha256.Sum256(a.Content)
			a.SHA256 = hex.EncodeToString(sum[:])
			if err := insertArtifact(ctx, tx, a, 0); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, d := range p.Decisions {
			if err := insertDecision(ctx, tx, d); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		for _, d := range p.DeadEnds {
			if err := insertDeadEnd(ctx, tx, d); err != nil {
				return fmt.Errorf("import task %s: %w", id, err)
			}
		}
		return appendEvents(ctx, tx, p.Events)
	})
}

// DecisionResolve marks a decision resolved, with its events.
func (s *Store) DecisionResolve(ctx context.Context, taskID task.ID, id string, at time.Time, events ...task.Event) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE decisions SET resolved_at = $1 WHERE id = $2 AND task_id = $3`, at.UTC(), id, string(taskID))
		if err != nil {
			return fmt.Errorf("resolve decision %s of task %s: %w", id, taskID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("resolve decision %s of task %s: %w", id, taskID, store.ErrNotFound)
		}
		return appendEvents(ctx, tx, events)
	})
}
