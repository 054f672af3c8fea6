package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestBriefWrapsWholeWordsAndKeepsTheDecisionMark checks a long human
// decision wraps at word boundaries with the mark on every line, as seen in
// the real console at 120x40 where the brief tab is 74 columns wide.
func TestBriefWrapsWholeWordsAndKeepsTheDecisionMark(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	m := New(newStubEngine(at), Options{Now: func() time.Time { return at }})
	decision := "1. 2026-01-02T09:00:00Z, by ana: keep the public API as it is; Mul(0, x) must be 0 and nothing else changes"
	m.tabs.detail = coord.Detail{Brief: strings.Join([]string{
		"## Goal", "", "Make the calc package correct: Add must return the sum and Mul the product, for every input.", "",
		task.HeadingDecisions, "", decision, "", task.HeadingPhasePrefix + "implement",
	}, "\n")}
	const w = 40
	lines := strings.Split(ansi.Strip(m.tabs.briefContent(w)), "\n")
	var marked []string
	for _, l := range lines {
		require.LessOrEqual(t, ansi.StringWidth(l), w, "line overflows: %q", l)
		if strings.HasPrefix(l, "┃ ") {
			marked = append(marked, strings.TrimPrefix(l, "┃ "))
		}
	}
	require.Greater(t, len(marked), 2, "the decision wraps onto several marked lines:\n%s", strings.Join(lines, "\n"))
	require.Equal(t, strings.Fields(decision), strings.Fields(strings.Join(marked, " ")), "no word is split")
	require.Contains(t, lines, "Make the calc package correct: Add must", "plain text wraps at a space")
}

// TestEventsSayTheRefusalSentenceOnceAndIndentContinuations checks a
// refusal whose text begins with its reason's sentence shows it once, and a
// long entry continues under the text, not under the time.
func TestEventsSayTheRefusalSentenceOnceAndIndentContinuations(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	m := New(newStubEngine(at), Options{Now: func() time.Time { return at }})
	sentence := task.ReasonStuck.Sentence()
	m.selID = "T1"
	m.Update(detailMsg{id: "T1", d: coord.Detail{Events: []task.Event{{
		At: at, Kind: task.EvRefusal, Reason: task.ReasonStuck,
		Text: sentence + " Session ABCD has shown the same screen for 1s.",
	}}}})
	out := ansi.Strip(m.tabs.eventsContent(50))
	require.Equal(t, 1, strings.Count(strings.Join(strings.Fields(out), " "), sentence), "the sentence is said once:\n%s", out)
	lines := strings.Split(out, "\n")
	require.Greater(t, len(lines), 1)
	require.True(t, strings.HasPrefix(lines[0], "09:00:00 REFUSED"), lines[0])
	for _, l := range lines[1:] {
		require.True(t, strings.HasPrefix(l, strings.Repeat(" ", 9)), "continuation indented past the time: %q", l)
		require.LessOrEqual(t, ansi.StringWidth(l), 50)
	}
}
