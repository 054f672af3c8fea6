package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// opDiff asks for what a task changed (coord.Differ). An engine older than
// it answers "unknown request", which the console shows as it is.
const opDiff = "diff"

type diffReq struct {
	Task  task.ID         `json:"task"`
	Query coord.DiffQuery `json:"query,omitzero"`
}

var (
	_ coord.Differ = (*Client)(nil)
	_ coord.Differ = (*relay)(nil)
)

// Diff asks the engine what the task changed, as q says.
func (cl *Client) Diff(ctx context.Context, id task.ID, q coord.DiffQuery) (diff.Result, error) {
	var r diff.Result
	b, err := cl.call(ctx, opDiff, diffReq{Task: id, Query: q})
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(b, &r)
	return r, err
}

// Diff of a task another engine runs is asked of that engine, whose
// worktree holds what its agent has not committed yet; when it cannot be
// reached, this engine reads the branch that engine pushed to [fleet]
// remote.
func (r *relay) Diff(ctx context.Context, id task.ID, q coord.DiffQuery) (diff.Result, error) {
	if _, ok := r.Opened.Pane(id); !ok {
		if cl := r.peerOf(id); cl != nil {
			if res, err := cl.Diff(ctx, id, q); err == nil {
				return res, nil
			}
		}
	}
	return r.Opened.Diff(ctx, id, q)
}

// serveDiff answers a diff request with the engine's Differ.
func (s *Server) serveDiff(ctx context.Context, body []byte) result {
	var q diffReq
	if err := json.Unmarshal(body, &q); err != nil {
		return result{err: err}
	}
	d, ok := s.Engine.(coord.Differ)
	if !ok {
		return result{err: fmt.Errorf("this engine cannot show diffs (engine protocol %d)", ProtocolVersion)}
	}
	res, err := d.Diff(ctx, q.Task, q.Query)
	return result{v: res, err: err}
}
