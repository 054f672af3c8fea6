package agent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestParseBrief(t *testing.T) {
	t.Parallel()
	text := renderBrief(task.PhaseReview, 3, "go test ./...")
	b, err := ParseBrief(text)
	require.NoError(t, err)
	require.Equal(t, Brief{
		Phase: task.PhaseReview, Artifact: task.ArtifactPath(task.PhaseReview), Sentinel: task.SentinelPath,
		Verify: "go test ./...", Task: "01JTASK0000000000000000001", Attempt: 3, Text: text,
	}, b)
}

func TestParseBriefTolerance(t *testing.T) {
	t.Parallel()
	text := strings.Join([]string{
		"## Goal", "x",
		task.HeadingPhase(task.PhasePlan),
		"- " + task.LabelArtifact + " `" + task.ArtifactPath(task.PhasePlan) + "`",
		"* " + task.LabelSentinel + " " + task.SentinelPath,
		task.LabelAttempt + " 2 of 3",
		task.HeadingContinuity,
		task.LabelVerify + " not this one, it is outside the phase section",
	}, "\r\n")
	b, err := ParseBrief(text)
	require.NoError(t, err)
	require.Equal(t, task.ArtifactPath(task.PhasePlan), b.Artifact)
	require.Equal(t, 2, b.Attempt)
	require.Empty(t, b.Verify)
}

func TestParseBriefErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text, want string }{
		{"no phase heading", "## Goal\nfix it", "no line starts with"},
		{"unknown phase", task.HeadingPhasePrefix + "dance", "unknown phase"},
		{"no sentinel", task.HeadingPhase(task.PhasePlan) + "\n" + task.LabelArtifact + " a.json", task.LabelSentinel},
		{"artifact outside", task.HeadingPhase(task.PhasePlan) + "\n" + task.LabelArtifact + " ../x.json\n" + task.LabelSentinel + " done", "not a path inside"},
		{"bad attempt", task.HeadingPhase(task.PhasePlan) + "\n" + task.LabelArtifact + " a\n" + task.LabelSentinel + " b\n" + task.LabelAttempt + " first", "not a positive attempt number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseBrief(tc.text)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
