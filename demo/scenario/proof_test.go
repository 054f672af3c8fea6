package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

func brief(sections ...string) string { return strings.Join(sections, "\n\n") + "\n" }

func TestCheckRelaunchedBrief(t *testing.T) {
	t.Parallel()
	decisions := task.HeadingDecisions + "\n1. by ana: " + Correction
	plan := task.HeadingPlan + "\n- fix Add"
	cont := task.HeadingContinuity + "\nAttempt 1 changed calc.go.\n" + task.HeadingDeadEnds + "\n- none"
	require.NoError(t, CheckRelaunchedBrief(brief(task.HeadingGoal+"\nx", decisions, plan, cont), Correction, "calc.go"))

	for name, tc := range map[string]struct {
		brief, want string
	}{
		"no continuity":    {brief(decisions, plan), "no \"" + task.HeadingContinuity},
		"continuity empty": {brief(decisions, plan, task.HeadingContinuity+"\nThis is the first session.\n"+task.HeadingDeadEnds+"\n- calc.go"), "does not name calc.go"},
		"no correction":    {brief(task.HeadingDecisions+"\nNone yet.", plan, cont), "does not hold the correction"},
		"plan first":       {brief(plan, decisions, cont), "after the plan"},
		"no plan":          {brief(decisions, cont), "no \"" + task.HeadingPlan},
	} {
		err := CheckRelaunchedBrief(tc.brief, Correction, "calc.go")
		require.ErrorContains(t, err, tc.want, name)
	}
}

func TestSectionStopsAtTheNextHeading(t *testing.T) {
	t.Parallel()
	b := "## A\na1\n### A.1\na2\n## B\nb1\n"
	for heading, want := range map[string]string{"## A": "a1\n", "### A.1": "a2\n", "## B": "b1\n"} {
		s, ok := Section(b, heading)
		require.True(t, ok, heading)
		require.Equal(t, want, s, heading)
	}
	_, ok := Section(b, "## C")
	require.False(t, ok)
}

func TestCheckBeatsNamesTheFirstMissing(t *testing.T) {
	t.Parallel()
	ev := func(k task.Kind, r task.Reason, text string) task.Event {
		return task.Event{Kind: k, Reason: r, Text: text}
	}
	all := []task.Event{
		ev(task.EvVerifyFinished, task.ReasonVerifyFailing, "baseline red"),
		ev(task.EvRefusal, task.ReasonStuck, ""),
		ev(task.EvResubmitted, "", ""),
		ev(task.EvRefusal, task.ReasonArtifactSchema, ""),
		ev(task.EvArtifactSealed, "", "Sealed "+task.ArtifactPath(task.PhasePlan)),
		ev(task.EvDecisionDelivered, "", ""),
		ev(task.EvLeaseExpired, task.ReasonLeaseExpired, ""),
		ev(task.EvSessionLaunched, "", ""),
		ev(task.EvVerifyFinished, "", "green"),
		ev(task.EvTaskAwaiting, "", ""),
		ev(task.EvTaskCompleted, "", ""),
	}
	require.NoError(t, CheckBeats(all))
	// The correction delivered after the lease expired is out of order.
	swapped := append([]task.Event(nil), all...)
	swapped[5], swapped[6] = swapped[6], swapped[5]
	require.ErrorContains(t, CheckBeats(swapped), `"lease expired"`)
	require.ErrorContains(t, CheckBeats(all[:10]), `"approved"`)
}
