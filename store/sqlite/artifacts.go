package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

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
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := fence(ctx, tx, "seal the "+string(p.Phase)+" artifact", p.TaskID, p.Token); err != nil {
			return err
		}
		if err := insertArtifact(ctx, tx, a, p.Token); err != nil {
			return fmt.Errorf("seal %w", err)
		}
		return s.appendEvents(ctx, tx, p.Events)
	})
	if err != nil {
		return store.Artifact{}, err
	}
	return a, nil
}

// insertArtifact writes a sealed artifact row inside tx, recording the lease
// token it was sealed under (0 for an imported one).
func insertArtifact(ctx context.Context, tx *sql.Tx, a store.Artifact, token int64) error {
	content := a.Content
	if content == nil {
		content = []byte{} // the column is NOT NULL; empty content is still a seal
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO artifacts (task_id, phase, content, sha256, session_id, token, at)
VALUES (?, ?, ?, ?, ?, ?, ?)`, string(a.TaskID), string(a.Phase), content, a.SHA256, a.Session, token, timeText(a.At))
	if err != nil {
		return fmt.Errorf("%s artifact of task %s: %w", a.Phase, a.TaskID, err)
	}
	return nil
}

// ArtifactList returns a task's sealed artifacts in sealing order.
func (s *Store) ArtifactList(ctx context.Context, taskID task.ID) ([]store.Artifact, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT task_id, phase, content, sha256, session_id, at FROM artifacts
WHERE task_id = ? ORDER BY id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("list artifacts of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []store.Artifact
	for rows.Next() {
		var a store.Artifact
		var tid, phase, at string
		if err := rows.Scan(&tid, &phase, &a.Content, &a.SHA256, &a.Session, &at); err != nil {
			return nil, fmt.Errorf("list artifacts of task %s: %w", taskID, err)
		}
		a.TaskID, a.Phase = task.ID(tid), task.Phase(phase)
		if a.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list artifacts of task %s: %w", taskID, err)
	}
	return out, nil
}
