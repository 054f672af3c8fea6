package coord

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestTaskOfAnIssue reads the goal, the acceptance (checklist and an
// Acceptance section), the verify block and the labels; escape sequences
// go, and a long body is cut.
func TestTaskOfAnIssue(t *testing.T) {
	s := NewSource(&Coordinator{cfg: config.Default()}, SourceConfig{Verify: "make test", Limit: 4096})
	is := forge.Issue{Number: 7, Title: "Add \x1b[31mhealth\x1b[0m", URL: "https://git.example.org/team/app/issues/7",
		Labels: []string{"orchestra", "harness:codex", "model:o4", "pipeline:plan,implement", "capability:net"},
		Body:   "Serve GET /health.\n\n- [ ] answers 200\n- [x] logs it\n\n```verify\ngo test ./health/\n```\n\n## Acceptance\n\n1. no new dependency\nplain line\n\n## Notes\n\nafterwards\n"}
	got := s.taskOf(is)
	require.Equal(t, "#7 Add health", got.Title)
	require.Equal(t, []string{"answers 200", "logs it", "no new dependency", "plain line"}, got.Acceptance)
	require.Equal(t, "go test ./health/", got.Verify)
	require.Equal(t, "codex", got.Harness)
	require.Equal(t, "o4", got.Model)
	require.Equal(t, task.Pipeline{task.PhasePlan, task.PhaseImplement}, got.Pipeline)
	require.Equal(t, []string{"net"}, got.Capabilities)
	require.Contains(t, got.Goal, "Serve GET /health.")
	require.Contains(t, got.Goal, "afterwards")
	require.Contains(t, got.Goal, is.URL)
	require.NotContains(t, got.Goal, "go test", "the verify block is not goal")

	plain := s.taskOf(forge.Issue{Number: 8, Title: "t", Body: strings.Repeat("x", 10000)})
	require.Equal(t, "make test", plain.Verify, "no verify block: the default")
	require.LessOrEqual(t, len(plain.Goal), 4096+200)
}

// TestDerivedIDsAreStableAndDistinct: every engine derives the same ids,
// and different issues and comments get different ones.
func TestDerivedIDsAreStableAndDistinct(t *testing.T) {
	require.Equal(t, IssueTaskID("k", 1), IssueTaskID("k", 1))
	require.NotEqual(t, IssueTaskID("k", 1), IssueTaskID("k", 2))
	require.NotEqual(t, IssueTaskID("k", 1), IssueTaskID("other", 1))
	c := forge.Comment{ID: 5}
	require.Equal(t, CommentDecisionID("k", c), CommentDecisionID("k", c))
	require.NotEqual(t, CommentDecisionID("k", c), CommentDecisionID("k", forge.Comment{ID: 6}))
}

// The state labels: one per state that has one, from the four the source
// keeps.
func TestStateLabels(t *testing.T) {
	for st, want := range map[task.State]string{
		task.StateQueued: "", task.StateLeased: "orchestra:running", task.StateRunning: "orchestra:running",
		task.StateParked: "orchestra:needs-you", task.StateAwaitingReview: "orchestra:review",
		task.StatePullOpen: "orchestra:review", task.StateFailed: "orchestra:failed",
		task.StateMerged: "", task.StateCancelled: "",
	} {
		require.Equal(t, want, stateLabel(st), "%s", st)
		if want != "" {
			require.Contains(t, stateLabels, want)
		}
	}
}
