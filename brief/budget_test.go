package brief

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var trimNote = regexp.MustCompile(`\n\[trimmed to fit (\d+) bytes: ([a-z ,]+)\]\n$`)

// trimmedSteps returns the steps the trim note names, nil when none.
func trimmedSteps(t *testing.T, out string, budget int) []string {
	t.Helper()
	m := trimNote.FindStringSubmatch(out)
	if m == nil {
		require.NotContains(t, out, "[trimmed to fit")
		return nil
	}
	require.Equal(t, fmt.Sprint(budget), m[1])
	return strings.Split(m[2], ", ")
}

// bigFacts is the full task with a large rules file, research and screen, so
// each trim step has something to cut.
func bigFacts() Facts {
	f := fullFacts()
	f.Rules += strings.Repeat("- another rule that takes some room in the brief\n", 60)
	f.Continuity[1].Screen += strings.Repeat("output line that fills the screen\n", 60)
	f.Research = fmt.Appendf(nil, `{"summary": "s", "findings": [{"topic": "t", "detail": %q}]}`, strings.Repeat("detail ", 600))
	return f
}

func TestBudgetTrimsBottomUp(t *testing.T) {
	t.Parallel()
	f := bigFacts()
	full := Render(f)
	require.NotContains(t, full, "[trimmed")

	// Walk the budget down: the trimmed steps must always be a prefix of
	// trimOrder, grow as the budget shrinks, and fit unless nothing is
	// left to trim.
	var prev []string
	seen := map[string]bool{}
	for budget := len(full); budget > 1000; budget -= 97 {
		f.Budget = budget
		out := Render(f)
		steps := trimmedSteps(t, out, budget)
		if len(steps) > 0 {
			require.Equal(t, trimOrder[:len(steps)], steps, "budget %d", budget)
		}
		require.GreaterOrEqual(t, len(steps), len(prev), "budget %d", budget)
		if len(steps) < len(trimOrder) {
			require.LessOrEqual(t, len(out), budget, "budget %d trimmed %v", budget, steps)
		}
		requireOrder(t, out, f.Phase)
		for _, s := range steps {
			seen[s] = true
		}
		prev = steps
	}
	for _, s := range trimOrder {
		require.True(t, seen[s], "no budget exercised trim step %q", s)
	}
}

func TestBudgetScreenGoesFirst(t *testing.T) {
	t.Parallel()
	f := bigFacts()
	full := Render(f)
	f.Budget = len(full) - 10
	out := Render(f)
	require.Equal(t, []string{trimScreen}, trimmedSteps(t, out, f.Budget))
	require.LessOrEqual(t, len(out), f.Budget)
	require.Contains(t, out, "Its last screen: trimmed to fit the brief's size budget.\n")
	require.Contains(t, out, "Earlier sessions, oldest first:")
	require.True(t, strings.HasSuffix(out, fmt.Sprintf("[trimmed to fit %d bytes: continuity screen]\n", f.Budget)))
}

// With more decisions than the budget holds, the brief still fits: the
// oldest are left out with a line saying which, the newest are kept whole,
// numbered as in the ledger, and the goal, acceptance and phase are never
// cut.
func TestBudgetKeepsNewestDecisionsGoalAcceptanceAndPhase(t *testing.T) {
	t.Parallel()
	f := bigFacts()
	for i := range 200 {
		f.Decisions = append(f.Decisions, store.Decision{
			ID: fmt.Sprint("big", i), Author: "ana", At: at,
			Text: fmt.Sprintf("decision %03d: %s", i, strings.Repeat("must stay ", 20)),
		})
	}
	f.Budget = 4096
	out := Render(f)
	require.LessOrEqual(t, len(out), f.Budget)
	require.Equal(t, trimOrder, trimmedSteps(t, out, f.Budget))
	newest := f.Decisions[len(f.Decisions)-1]
	require.Contains(t, out, fmt.Sprintf("%d. ", len(f.Decisions))+at.UTC().Format(time.RFC3339)+", by ana: "+strings.TrimSpace(newest.Text)+"\n")
	m := regexp.MustCompile(`Decisions 1 to (\d+) \(the oldest \d+ of 203\) are left out`).FindStringSubmatch(out)
	require.NotNil(t, m, "no line says which decisions were left out:\n%s", out)
	require.NotContains(t, out, f.Decisions[0].Text, "the oldest decision was kept")
	elided, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.Contains(t, out, fmt.Sprintf("\n%d. %s", elided+1, at.UTC().Format(time.RFC3339)), "the first kept decision keeps its number")
	require.NotContains(t, out, fmt.Sprintf("\n%d. %s", elided, at.UTC().Format(time.RFC3339)))
	require.Contains(t, out, "Add returns a-b instead of a+b")
	for _, a := range f.Task.Acceptance {
		require.Contains(t, out, "- "+a+"\n")
	}
	require.Contains(t, out, task.Schema(f.Phase))
	require.Contains(t, out, task.LabelSentinel+" "+task.SentinelPath+"\n")
	// Trimmed sections keep their headings.
	requireOrder(t, out, f.Phase)
	require.NotContains(t, out, "Add lives in calc.go", "the research was trimmed")
}

// 200 corrections at the 16 KiB limit (3 MiB of decisions) under the
// default budget: the brief fits; the newest correction is whole; the
// oldest are left out with a line saying so; those kept before the newest
// are cut to their opening.
func TestTwoHundredLargeCorrectionsFitTheBudget(t *testing.T) {
	t.Parallel()
	f := bigFacts()
	f.Decisions = nil
	line := "Use the standard library only; no new dependency is allowed here.\n"
	for i := range 200 {
		text := fmt.Sprintf("Correction %03d. ", i) + strings.Repeat(line, (16<<10)/len(line)-1)
		require.LessOrEqual(t, len(text), 16<<10)
		f.Decisions = append(f.Decisions, store.Decision{ID: fmt.Sprint(i), Text: text, Author: "op", At: at})
	}
	out := Render(f)
	require.LessOrEqual(t, len(out), DefaultBudget)
	require.Contains(t, out, indentRest(prose(f.Decisions[199].Text), "   "), "the newest correction is whole")
	require.Contains(t, out, "Correction 198. ", "the one before it keeps its opening")
	require.NotContains(t, out, "Correction 000. ")
	require.Regexp(t, `Decisions 1 to \d+ \(the oldest \d+ of 200\) are left out to fit the brief's size budget; their full texts are in the task's ledger\.`, out)
	require.Contains(t, out, cutMark)
	require.Contains(t, out, task.HeadingPhase(f.Phase))
	require.Contains(t, out, task.Schema(f.Phase))
	requireOrder(t, out, f.Phase)
}

// The newest decision alone over the budget is cut to what is left, never
// left out, and every older one is.
func TestNewestDecisionIsCutNotDropped(t *testing.T) {
	t.Parallel()
	f := fullFacts()
	f.Decisions = nil
	for i := range 3 {
		f.Decisions = append(f.Decisions, store.Decision{ID: fmt.Sprint(i), Author: "op", At: at,
			Text: fmt.Sprintf("Correction %d. ", i) + strings.Repeat("word ", 20000)})
	}
	f.Budget = 12 << 10
	out := Render(f)
	require.LessOrEqual(t, len(out), f.Budget)
	require.Contains(t, out, "3. "+at.UTC().Format(time.RFC3339)+", by op: Correction 2. word")
	require.Contains(t, out, "Decisions 1 to 2 (the oldest 2 of 3) are left out")
	require.Contains(t, out, cutMark)
}

func TestBudgetDefault(t *testing.T) {
	t.Parallel()
	f := bigFacts()
	f.Research = fmt.Appendf(nil, `{"summary": "s", "findings": [{"topic": "t", "detail": %q}]}`, strings.Repeat("x", DefaultBudget))
	out := Render(f)
	require.LessOrEqual(t, len(out), DefaultBudget)
	require.Contains(t, trimmedSteps(t, out, DefaultBudget), trimResearch)
}

// Trimming never makes the brief longer: an empty section's one line stays.
func TestBudgetKeepsShortEmptySections(t *testing.T) {
	t.Parallel()
	f := emptyFacts()
	f.Budget = 100
	out := Render(f)
	require.Nil(t, trimmedSteps(t, out, f.Budget))
	require.Equal(t, Render(emptyFacts()), out)
}

func BenchmarkRenderFull(b *testing.B) {
	f := fullFacts()
	b.ReportAllocs()
	b.SetBytes(int64(len(Render(f))))
	for b.Loop() {
		_ = Render(f)
	}
}

func BenchmarkRenderTrimmed(b *testing.B) {
	f := bigFacts()
	f.Budget = 6 << 10
	b.ReportAllocs()
	for b.Loop() {
		_ = Render(f)
	}
}

// A brief always fits its budget, even when the decisions alone would not:
// ten corrections at the 16 KiB limit, each many lines, under the default
// budget. Older decisions are cut first; the newest keeps as much as fits.
func TestDecisionsAreCutToFitTheBudget(t *testing.T) {
	t.Parallel()
	f := bigFacts()
	f.Decisions = nil
	line := "Use the standard library only; no new dependency is allowed here.\n"
	for i := range 10 {
		text := fmt.Sprintf("Decision %d. ", i) + strings.Repeat(line, (16<<10)/len(line))
		f.Decisions = append(f.Decisions, store.Decision{ID: fmt.Sprint(i), Text: text, Author: "op"})
	}
	out := Render(f)
	require.LessOrEqual(t, len(out), DefaultBudget)
	require.Equal(t, trimOrder, trimmedSteps(t, out, DefaultBudget))
	for i := range 10 {
		require.Contains(t, out, fmt.Sprintf("Decision %d.", i), "no decision vanishes")
	}
	require.Contains(t, out, cutMark)
	require.Contains(t, out, task.HeadingPhase(f.Phase))

	// One decision within the budget is never cut.
	f.Decisions = f.Decisions[:1]
	f.Decisions[0].Text = "Keep the API stable."
	out = Render(f)
	require.Contains(t, out, "Keep the API stable.\n")
	require.NotContains(t, out, cutMark)
}
