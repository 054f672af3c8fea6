package sqlq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// DecisionInsert stores a human correction and its events.
func (o Ops) DecisionInsert(ctx context.Context, d store.Decision, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		return insertDecision(ctx, tx, d)
	})
}

// insertDecision writes a decision row inside tx; its anchor column holds
// JSON, or NULL for a plain correction.
func insertDecision(ctx context.Context, tx Tx, d store.Decision) error {
	var anchor any
	if d.Anchor != nil {
		b, err := json.Marshal(d.Anchor)
		if err != nil {
			return fmt.Errorf("encode the anchor of decision %s: %w", d.ID, err)
		}
		anchor = string(b)
	}
	dl := tx.Dialect()
	_, err := tx.Exec(ctx, `INSERT INTO decisions (id, task_id, text, author, at, anchor, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		d.ID, string(d.TaskID), d.Text, d.Author, dl.Time(d.At), anchor, dl.OptTime(d.ResolvedAt))
	if err != nil {
		return fmt.Errorf("insert decision %s for task %s: %w", d.ID, d.TaskID, err)
	}
	return nil
}

// DecisionList returns a task's decisions, oldest first.
func (o Ops) DecisionList(ctx context.Context, taskID task.ID) ([]store.Decision, error) {
	return list(ctx, o.D.Reads(), "decisions of task "+string(taskID), func(row Row) (store.Decision, error) {
		var d store.Decision
		var tid string
		var anchor *string
		if err := row.Scan(&d.ID, &tid, &d.Text, &d.Author, At(&d.At), &anchor, At(&d.ResolvedAt)); err != nil {
			return d, err
		}
		d.TaskID = task.ID(tid)
		var err error
		if anchor != nil {
			if d.Anchor, err = store.ParseAnchor(*anchor); err != nil {
				err = fmt.Errorf("decision %s: %w", d.ID, err)
			}
		}
		return d, err
	}, `SELECT id, task_id, text, author, at, anchor, resolved_at FROM decisions
WHERE task_id = ? ORDER BY at, id`, string(taskID))
}

const insertDelivery = `INSERT INTO deliveries (decision_id, session_id, at) VALUES (?, ?, ?)
ON CONFLICT (decision_id, session_id) DO NOTHING`

// DeliveryInsert records that a decision reached a session, with its events.
// It reports false and writes nothing when that delivery is already stored,
// so a retried delivery never types the correction twice into the ledger.
func (o Ops) DeliveryInsert(ctx context.Context, d store.Delivery, events ...task.Event) (bool, error) {
	inserted := false
	err := o.D.Write(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, insertDelivery, d.DecisionID, d.SessionID, tx.Dialect().Time(d.At))
		if err != nil {
			return fmt.Errorf("insert delivery of decision %s to session %s: %w", d.DecisionID, d.SessionID, err)
		}
		if n == 0 {
			return nil
		}
		inserted = true
		return tx.AppendEvents(ctx, events)
	})
	if err != nil {
		return false, err
	}
	return inserted, nil
}

// DecisionDeliver records d, its delivery dl and the events in one
// transaction (a correction's two writes as one: one commit on the input
// path instead of two).
func (o Ops) DecisionDeliver(ctx context.Context, d store.Decision, dl store.Delivery, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		if err := insertDecision(ctx, tx, d); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, insertDelivery, dl.DecisionID, dl.SessionID, tx.Dialect().Time(dl.At)); err != nil {
			return fmt.Errorf("insert delivery of decision %s to session %s: %w", dl.DecisionID, dl.SessionID, err)
		}
		return nil
	})
}

// DeliveryList returns the deliveries of a task's decisions, oldest first.
func (o Ops) DeliveryList(ctx context.Context, taskID task.ID) ([]store.Delivery, error) {
	return list(ctx, o.D.Reads(), "deliveries of task "+string(taskID), func(row Row) (store.Delivery, error) {
		var d store.Delivery
		err := row.Scan(&d.DecisionID, &d.SessionID, At(&d.At))
		return d, err
	}, `SELECT dl.decision_id, dl.session_id, dl.at
FROM deliveries dl JOIN decisions d ON d.id = dl.decision_id
WHERE d.task_id = ? ORDER BY dl.at, dl.decision_id, dl.session_id`, string(taskID))
}

// DecisionResolve marks a decision resolved, with its events.
func (o Ops) DecisionResolve(ctx context.Context, taskID task.ID, id string, at time.Time, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE decisions SET resolved_at = ? WHERE id = ? AND task_id = ?`, tx.Dialect().Time(at), id, string(taskID))
		if err != nil {
			return fmt.Errorf("resolve decision %s of task %s: %w", id, taskID, err)
		}
		if n == 0 {
			return fmt.Errorf("resolve decision %s of task %s: %w", id, taskID, store.ErrNotFound)
		}
		return nil
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ArtifactSeal records an artifact's content and sha256, fenced by the lease
// token: a session whose lease was taken away cannot seal.
func (o Ops) ArtifactSeal(ctx context.Context, p store.ArtifactSealParams) (store.Artifact, error) {
	a := store.Artifact{
		TaskID:  p.TaskID,
		Phase:   p.Phase,
		Content: p.Content,
		SHA256:  sha256Hex(p.Content),
		Session: p.SessionID,
		At:      p.At.UTC(),
	}
	err := write(ctx, o.D, p.Events, func(tx Tx) error {
		if err := fence(ctx, tx, "seal the "+string(p.Phase)+" artifact", p.TaskID, p.Token); err != nil {
			return err
		}
		if err := insertArtifact(ctx, tx, a, p.Token); err != nil {
			return fmt.Errorf("seal %w", err)
		}
		return nil
	})
	if err != nil {
		return store.Artifact{}, err
	}
	return a, nil
}

// insertArtifact writes a sealed artifact row inside tx, recording the lease
// token it was sealed under (0 for an imported one).
func insertArtifact(ctx context.Context, tx Tx, a store.Artifact, token int64) error {
	content := a.Content
	if content == nil {
		content = []byte{} // the column is NOT NULL; empty content is still a seal
	}
	_, err := tx.Exec(ctx, `INSERT INTO artifacts (task_id, phase, content, sha256, session_id, token, at)
VALUES (?, ?, ?, ?, ?, ?, ?)`, string(a.TaskID), string(a.Phase), content, a.SHA256, a.Session, token, tx.Dialect().Time(a.At))
	if err != nil {
		return fmt.Errorf("%s artifact of task %s: %w", a.Phase, a.TaskID, err)
	}
	return nil
}

// ArtifactList returns a task's sealed artifacts in sealing order.
func (o Ops) ArtifactList(ctx context.Context, taskID task.ID) ([]store.Artifact, error) {
	return list(ctx, o.D.Reads(), "artifacts of task "+string(taskID), func(row Row) (store.Artifact, error) {
		var a store.Artifact
		var tid, phase string
		err := row.Scan(&tid, &phase, &a.Content, &a.SHA256, &a.Session, At(&a.At))
		a.TaskID, a.Phase = task.ID(tid), task.Phase(phase)
		return a, err
	}, `SELECT task_id, phase, content, sha256, session_id, at FROM artifacts
WHERE task_id = ? ORDER BY id`, string(taskID))
}

// VerdictInsert stores one verify run and its events.
func (o Ops) VerdictInsert(ctx context.Context, v store.VerdictRecord, events ...task.Event) error {
	verdict := v.Verdict
	verdict.At = verdict.At.UTC()
	body, err := json.Marshal(verdict)
	if err != nil {
		return fmt.Errorf("insert verdict for task %s: %w", v.TaskID, err)
	}
	return write(ctx, o.D, events, func(tx Tx) error {
		if v.Token != 0 {
			if err := fence(ctx, tx, "record a verdict", v.TaskID, v.Token); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO verdicts (task_id, session_id, phase, status, verdict, at)
VALUES (?, ?, ?, ?, ?, ?)`, string(v.TaskID), v.SessionID, string(v.Phase), string(verdict.Status),
			string(body), tx.Dialect().Time(verdict.At))
		if err != nil {
			return fmt.Errorf("insert verdict for task %s: %w", v.TaskID, err)
		}
		return nil
	})
}

// VerdictList returns a task's verify runs in the order they were stored.
func (o Ops) VerdictList(ctx context.Context, taskID task.ID) ([]store.VerdictRecord, error) {
	return list(ctx, o.D.Reads(), "verdicts of task "+string(taskID), func(row Row) (store.VerdictRecord, error) {
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
	}, `SELECT task_id, session_id, phase, verdict FROM verdicts WHERE task_id = ? ORDER BY id`, string(taskID))
}

// DeadEndInsert stores an approach that failed, and its events.
func (o Ops) DeadEndInsert(ctx context.Context, d store.DeadEnd, events ...task.Event) error {
	return write(ctx, o.D, events, func(tx Tx) error {
		return insertDeadEnd(ctx, tx, d)
	})
}

// insertDeadEnd writes a dead-end row inside tx.
func insertDeadEnd(ctx context.Context, tx Tx, d store.DeadEnd) error {
	_, err := tx.Exec(ctx, `INSERT INTO dead_ends (task_id, phase, attempt, text, at) VALUES (?, ?, ?, ?, ?)`,
		string(d.TaskID), string(d.Phase), d.Attempt, d.Text, tx.Dialect().Time(d.At))
	if err != nil {
		return fmt.Errorf("insert dead end for task %s: %w", d.TaskID, err)
	}
	return nil
}

// DeadEndList returns a task's dead ends in the order they were stored.
func (o Ops) DeadEndList(ctx context.Context, taskID task.ID) ([]store.DeadEnd, error) {
	return list(ctx, o.D.Reads(), "dead ends of task "+string(taskID), func(row Row) (store.DeadEnd, error) {
		var d store.DeadEnd
		var tid, phase string
		err := row.Scan(&tid, &phase, &d.Attempt, &d.Text, At(&d.At))
		d.TaskID, d.Phase = task.ID(tid), task.Phase(phase)
		return d, err
	}, `SELECT task_id, phase, attempt, text, at FROM dead_ends WHERE task_id = ? ORDER BY id`, string(taskID))
}
