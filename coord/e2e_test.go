package coord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

func TestScriptedTaskRunsEveryPhaseToGreen(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhasePlan:      {{InvalidFirst: true}},
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	id := b.add(t)
	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	t.Log("\n" + b.dump())

	ctx := context.Background()
	arts, err := b.st.ArtifactList(ctx, id)
	require.NoError(t, err)
	var phases []task.Phase
	for _, a := range arts {
		phases = append(phases, a.Phase)
		require.Len(t, a.SHA256, 64)
	}
	require.Equal(t, []task.Phase{task.PhaseFrame, task.PhaseResearch, task.PhasePlan, task.PhaseImplement, task.PhaseReview}, phases)

	vs, err := b.st.VerdictList(ctx, id)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(vs), 2)
	require.Equal(t, verify.StatusIncomplete, vs[0].Verdict.Status, "the baseline is red")
	require.Equal(t, verify.StatusOK, vs[len(vs)-1].Verdict.Status, "the gate ends green")
	require.Positive(t, vs[len(vs)-1].Verdict.Passed)

	// The refused plan was typed back into the pane and recorded, then the
	// corrected plan accepted.
	var refused bool
	for _, e := range b.events {
		if e.Kind == task.EvRefusal && e.Reason == task.ReasonArtifactSchema {
			refused = true
		}
	}
	require.True(t, refused, b.dump())
	inputs, err := agent.ReadInputLog(b.record)
	require.NoError(t, err)
	var typedBack int
	for _, in := range inputs {
		if strings.HasPrefix(in.Text, task.RefusalPrefix) {
			typedBack++
		}
	}
	require.Equal(t, 1, typedBack, "the refusal reached the agent once")

	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateAwaitingReview, tk.State)
	require.Contains(t, gitShow(t, b.root, tk.Branch, "calc.go"), "return a * b }", "the task branch holds the change")

	_, err = b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: id})
	require.NoError(t, err)
	tk, err = b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateCompleted, tk.State)
}
