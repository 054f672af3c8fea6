package coord

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// renderBrief gathers the stored facts of t and renders the brief of r's
// session. It reads the store and git, so it runs off the loop. It returns
// the ids of the decisions the brief contains.
func (c *Coordinator) renderBrief(ctx context.Context, t task.Task, r *run, dir string) (string, []string, error) {
	decisions, err := c.st.DecisionList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read decisions: %w", err)
	}
	arts, err := c.st.ArtifactList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read artifacts: %w", err)
	}
	sessions, err := c.st.SessionList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read sessions: %w", err)
	}
	deadEnds, err := c.st.DeadEndList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read dead ends: %w", err)
	}
	f := brief.Facts{
		Task: t, Phase: r.phase, Attempt: r.attempt, Decisions: openDecisions(decisions),
		Rules: c.p.Repo.Rules(), DeadEnds: deadEnds, Budget: c.cfg.Brief.Budget,
	}
	for _, a := range arts {
		switch a.Phase {
		case task.PhaseResearch:
			f.Research = a.Content
		case task.PhasePlan:
			f.Plan = a.Content
		}
	}
	f.Continuity = continuities(sessions, r.sessionID)
	if dir != "" {
		if st, err := repo.VerifiedState(dir, t.BaseCommit); err == nil {
			f.Git = &brief.GitState{Branch: st.Branch, Head: st.Head, Base: st.Base, Dirty: st.Dirty,
				Ahead: st.Ahead, Behind: st.Behind, Changed: st.Changed}
		}
	}
	ids := make([]string, len(decisions))
	for i, d := range decisions {
		ids[i] = d.ID
	}
	return brief.Render(f), ids, nil
}

// continuities returns the continuity records of the task's earlier
// sessions, oldest first, skipping the current one.
func continuities(sessions []store.Session, current string) []brief.Continuity {
	var out []brief.Continuity
	for _, s := range sessions {
		if s.ID == current || s.Continuity == "" {
			continue
		}
		var cont brief.Continuity
		if err := json.Unmarshal([]byte(s.Continuity), &cont); err != nil {
			continue
		}
		out = append(out, cont)
	}
	return out
}
