package brief

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// headings lists the brief's headings in authority order.
func headings(p task.Phase) []string {
	return []string{
		task.HeadingGoal, task.HeadingAcceptance, task.HeadingDecisions, task.HeadingPhase(p),
		task.HeadingRules, task.HeadingGitState, task.HeadingResearch, task.HeadingPlan,
		task.HeadingContinuity, task.HeadingDeadEnds,
	}
}

// requireOrder checks every heading appears once, on its own line, in order.
func requireOrder(t *testing.T, out string, p task.Phase) {
	t.Helper()
	last := -1
	for _, h := range headings(p) {
		require.Equal(t, 1, strings.Count(out, "\n"+h+"\n"), "heading %q", h)
		i := strings.Index(out, "\n"+h+"\n")
		require.Greater(t, i, last, "heading %q is out of order", h)
		last = i
	}
}

func TestRenderFull(t *testing.T) {
	t.Parallel()
	f := fullFacts()
	out := Render(f)
	golden.RequireEqual(t, []byte(out))
	requireOrder(t, out, f.Phase)
	require.NotContains(t, out, "[trimmed", "the full brief fits the default budget")
	require.Equal(t, out, Render(fullFacts()), "rendering is deterministic")
}

func TestRenderEmpty(t *testing.T) {
	t.Parallel()
	f := emptyFacts()
	out := Render(f)
	golden.RequireEqual(t, []byte(out))
	requireOrder(t, out, f.Phase)
	for _, s := range []string{"No human decisions.", "No repository rules found.", "Not read", "None accepted yet.", "None yet"} {
		require.Contains(t, out, s)
	}
}

// A decision made after the plan was sealed still outranks it: it renders
// above the plan.
func TestDecisionAfterPlanRendersAbovePlan(t *testing.T) {
	t.Parallel()
	f := fullFacts()
	late := "Ignore step 2 of the plan: the table test exists already."
	f.Decisions = append(f.Decisions, store.Decision{ID: "d9", Text: late, Author: "ana", At: at.Add(48 * time.Hour)})
	out := Render(f)
	require.Contains(t, out, late)
	require.Less(t, strings.Index(out, late), strings.Index(out, task.HeadingPlan))
	require.Less(t, strings.Index(out, late), strings.Index(out, task.HeadingPhase(f.Phase)))
}

// Text inside a section cannot pass for one of the brief's headings.
func TestEmbeddedHeadingsAreDemoted(t *testing.T) {
	t.Parallel()
	f := emptyFacts()
	f.Rules = "## Goal\nbe fast\n### Dead ends already tried\n#hashtag"
	f.Task.Goal = "## Current phase review\nreal goal"
	out := Render(f)
	requireOrder(t, out, f.Phase)
	require.Contains(t, out, "#### Goal\nbe fast\n#### Dead ends already tried\n#hashtag")
}

func TestFenceOutlastsBackticks(t *testing.T) {
	t.Parallel()
	f := fullFacts()
	f.Continuity[1].Screen = "```\n## Goal\n````\n"
	out := Render(f)
	require.Contains(t, out, "`````text\n```\n## Goal\n````\n`````\n")
}

func TestLongListsAreCapped(t *testing.T) {
	t.Parallel()
	f := emptyFacts()
	f.Git = &GitState{Branch: "b"}
	for i := range maxListed + 7 {
		f.Git.Changed = append(f.Git.Changed, "file"+string(rune('a'+i%26))+".go")
	}
	out := Render(f)
	require.Contains(t, out, "- … and 7 more\n")
	require.Equal(t, maxListed+1, strings.Count(out, "\n- "))
}

// The agreement test: read the current-phase section the way an agent does,
// write the example artifact where it says, and the validator must accept it.
func TestPhaseSectionAgreesWithValidator(t *testing.T) {
	t.Parallel()
	for _, p := range task.Phases {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			f := fullFacts()
			f.Phase, f.Attempt = p, 2
			section := phaseSectionOf(t, Render(f), p)

			require.Equal(t, string(f.Task.ID), labelValue(t, section, task.LabelTask))
			require.Equal(t, "2", labelValue(t, section, task.LabelAttempt))
			require.Equal(t, task.SentinelPath, labelValue(t, section, task.LabelSentinel))
			require.Equal(t, f.Task.Verify, labelValue(t, section, task.LabelVerify))
			require.Contains(t, section, task.Job(p))

			fences := jsonFences(section)
			require.Len(t, fences, 2, "the schema and the example")
			require.Equal(t, task.Schema(p), fences[0])
			require.Equal(t, task.Example(p), fences[1])

			root := t.TempDir()
			path := filepath.Join(root, filepath.FromSlash(labelValue(t, section, task.LabelArtifact)))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(fences[1]), 0o644))
			data, err := task.ReadArtifact(root, p)
			require.NoError(t, err)
			require.Equal(t, fences[1], string(data))
		})
	}
}

// phaseSectionOf returns the current-phase section: from its heading to the
// next "## " heading.
func phaseSectionOf(t *testing.T, out string, p task.Phase) string {
	t.Helper()
	start := strings.Index(out, "\n"+task.HeadingPhase(p)+"\n")
	require.GreaterOrEqual(t, start, 0, "no current-phase heading")
	rest := out[start+1:]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end+1]
	}
	return rest
}

// labelValue returns what follows "label " on the one line that starts so.
func labelValue(t *testing.T, section, label string) string {
	t.Helper()
	var found []string
	for line := range strings.SplitSeq(section, "\n") {
		if v, ok := strings.CutPrefix(line, label+" "); ok {
			found = append(found, v)
		}
	}
	require.Len(t, found, 1, "lines labelled %q", label)
	return found[0]
}

// jsonFences returns the bodies of the ```json fences in s.
func jsonFences(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "```json\n")
		if i < 0 {
			return out
		}
		s = s[i+len("```json\n"):]
		j := strings.Index(s, "\n```\n")
		if j < 0 {
			return out
		}
		out = append(out, s[:j])
		s = s[j+len("\n```\n"):]
	}
}
