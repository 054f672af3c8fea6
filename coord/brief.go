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

// renderBrief gathers the stored facts of t (in st) and renders the brief
// of r's session, with the repository's rules and the brief's size cap
// (budget, [brief]). It reads the store and git, so it runs off the loop.
// It returns the ids of the decisions the brief contains.
func renderBrief(ctx context.Context, st store.Store, rules string, budget int, t task.Task, r *run, dir string) (string, []string, error) {
	decisions, err := st.DecisionList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read decisions: %w", err)
	}
	arts, err := st.ArtifactList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read artifacts: %w", err)
	}
	sessions, err := st.SessionList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read sessions: %w", err)
	}
	deadEnds, err := st.DeadEndList(ctx, t.ID)
	if err != nil {
		return "", nil, fmt.Errorf("read dead ends: %w", err)
	}
	f := brief.Facts{
		Task: t, Phase: r.phase, Attempt: r.attempt, Decisions: openDecisions(decisions),
		Rules: rules, DeadEnds: deadEnds, Budget: budget,
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
		if gs, err := repo.VerifiedState(dir, t.BaseCommit); err == nil {
			f.Git = &brief.GitState{Branch: gs.Branch, Head: gs.Head, Base: gs.Base, Dirty: gs.Dirty,
				Ahead: gs.Ahead, Behind: gs.Behind, Changed: gs.Changed}
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
