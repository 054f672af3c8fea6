package task

// Brief headings and line labels. The brief renderer writes them and every
// reader of a brief (the scripted agent, the model stub, tests) finds its way
// by them, so they are defined here once. The order of Headings is the
// authority order: what comes first outranks what follows.
const (
	HeadingGoal       = "## Goal"
	HeadingAcceptance = "## Acceptance"
	HeadingDecisions  = "## Current human decisions"
	// HeadingPhasePrefix is followed by the phase name: "## Current phase plan".
	HeadingPhasePrefix = "## Current phase "
	HeadingRules       = "## Repository rules"
	HeadingGitState    = "## Verified git state"
	HeadingResearch    = "## Accepted research"
	HeadingPlan        = "## Accepted plan"
	HeadingContinuity  = "## Continuity from the previous session"
	HeadingDeadEnds    = "### Dead ends already tried"

	// Labels of the lines in the current-phase section. Each is followed by
	// one space and its value on the same line.
	LabelArtifact = "Artifact:"
	LabelSentinel = "Sentinel:"
	LabelVerify   = "Verify:"
	LabelTask     = "Task:"
	LabelAttempt  = "Attempt:"

	// DecisionHeader starts a correction typed into a live pane, so the agent
	// (and the operator reading the pane) can tell it from other input.
	DecisionHeader = "HUMAN DECISION (overrides the plan):"

	// RefusalPrefix starts a refusal typed back into a live pane (an invalid
	// artifact), so the agent knows to fix it and write the sentinel again.
	RefusalPrefix = "REFUSED:"
)

// HeadingPhase returns the current-phase heading for p.
func HeadingPhase(p Phase) string { return HeadingPhasePrefix + string(p) }
