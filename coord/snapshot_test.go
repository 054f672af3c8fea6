package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// A task with nothing live behind it is summarised to what the list
// draws; a live one (a session, a lease or a gate) stays whole.
func TestSummaryKeepsWhatTheListDraws(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	full := TaskView{
		Task: task.Task{ID: task.NewID(at), Title: "fix it", Goal: "a long goal", Acceptance: []string{"green"},
			Verify: "go test ./...", Repo: "/repo", Pipeline: task.DefaultPipeline(), Harness: "claude", Model: "opus",
			Capabilities: []string{"gpu"}, State: task.StateFailed, Phase: task.PhaseReview, Attempt: 2,
			BaseCommit: "abc", Branch: "orchestra/x", Reason: "attempts used", CreatedAt: at, UpdatedAt: at.Add(time.Hour)},
		Verdict: &verify.Verdict{Status: verify.StatusIncomplete, Command: "go test ./...", Passed: 1, Failed: 1, Counted: true, Tail: "FAIL\n"},
		Flag:    "failed",
		Usage:   Usage{InputTokens: 10, CostUSD: 0.5, Models: []string{"opus"}, Phases: map[task.Phase]Usage{task.PhasePlan: {InputTokens: 10}}},
		Models:  []string{"opus"},
	}
	s := full.Summary()
	require.Equal(t, task.Task{ID: full.Task.ID, Title: "fix it", Harness: "claude", Model: "opus", State: task.StateFailed,
		Phase: task.PhaseReview, Attempt: 2, BaseCommit: "abc", Branch: "orchestra/x", Reason: "attempts used",
		CreatedAt: at, UpdatedAt: at.Add(time.Hour)}, s.Task)
	require.Equal(t, "", s.Verdict.Tail)
	require.Equal(t, full.Verdict.Line(), s.Verdict.Line())
	require.Equal(t, "FAIL\n", full.Verdict.Tail, "the coordinator's own verdict is not changed")
	require.Nil(t, s.Usage.Phases)
	require.Equal(t, full.Usage.CostUSD, s.Usage.CostUSD)
	require.Equal(t, full.Flag, s.Flag)
	require.Equal(t, full.Models, s.Models)

	for _, live := range []TaskView{
		func() TaskView { v := full; v.SessionID = "s1"; return v }(),
		func() TaskView { v := full; v.Lease = &LeaseView{Token: 1}; return v }(),
		func() TaskView { v := full; v.Gate = true; return v }(),
	} {
		require.Equal(t, live, live.Summary())
	}
}
