package brief

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func title(t task.Task) string {
	name := oneLine(t.Title)
	if name == "" {
		name = "(untitled)"
	}
	return "# Task " + string(t.ID) + ": " + name + "\n"
}

func goalSection(goal string) string {
	body := prose(goal)
	if body == "" {
		body = "No goal given."
	}
	return task.HeadingGoal + "\n\n" + body + "\n"
}

func acceptanceSection(items []string) string {
	var kept []string
	for _, it := range items {
		if strings.TrimSpace(it) != "" {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 {
		return task.HeadingAcceptance + "\n\nNo acceptance criteria given: the verify command is the only check.\n"
	}
	// Acceptance is never trimmed and never capped: every check counts.
	var sb strings.Builder
	sb.WriteString(task.HeadingAcceptance + "\n\n")
	for _, it := range kept {
		sb.WriteString("- " + indentRest(prose(it), "  ") + "\n")
	}
	return sb.String()
}

func decisionsSection(ds []store.Decision) string {
	return decisionsFrom(ds, 0)
}

// decisionsFrom renders the decisions section with ds[:elided] left out,
// named by one line, and the rest numbered as they are in the ledger.
func decisionsFrom(ds []store.Decision, elided int) string {
	if len(ds) == 0 {
		return task.HeadingDecisions + "\n\nNo human decisions.\n"
	}
	var sb strings.Builder
	sb.WriteString(task.HeadingDecisions + "\n\n")
	sb.WriteString("These corrections come from the operator. They override everything below, " +
		"the accepted plan included; where two disagree, the later one wins.\n\n")
	if elided > 0 {
		fmt.Fprintf(&sb, "Decisions 1 to %d (the oldest %d of %d) are left out to fit the brief's size budget; "+
			"their full texts are in the task's ledger. Every decision below is newer and wins where they disagree.\n\n",
			elided, elided, len(ds))
	}
	for i, d := range ds[elided:] {
		author := oneLine(d.Author)
		if author == "" {
			author = "the operator"
		}
		fmt.Fprintf(&sb, "%d. %s, by %s: %s\n", elided+i+1, d.At.UTC().Format(time.RFC3339), author,
			indentRest(prose(d.Text), "   "))
	}
	return sb.String()
}

// cutDecision is the opening kept of a decision cut to fit the budget.
const cutDecision = 160

// fitDecisions renders the decisions section within room bytes, giving
// up as little as it can, in this order: every decision but the newest is
// cut to its opening; then the oldest are left out, as few as fit, with a
// line saying which; then the newest is cut to what is left (never below
// its opening). The newest decision outranks all others, so it is the
// last to lose anything and is never left out.
func fitDecisions(ds []store.Decision, room int) string {
	if out := decisionsSection(ds); len(out) <= room || len(ds) == 0 {
		return out
	}
	cut := make([]store.Decision, len(ds))
	copy(cut, ds)
	for i := range cut[:len(cut)-1] {
		cut[i].Text = opening(cut[i].Text, cutDecision)
	}
	if out := decisionsFrom(cut, 0); len(out) <= room {
		return out
	}
	// The fewest oldest left out for the rest to fit: the section shrinks
	// as more are left out, so the first count that fits is found by
	// bisection.
	n := len(cut)
	elided := sort.Search(n-1, func(e int) bool { return len(decisionsFrom(cut, e+1)) <= room }) + 1
	if elided < n {
		return decisionsFrom(cut, elided)
	}
	// Only the newest is left, and it alone is too long: shrink it until
	// the section fits (its lines are indented when rendered, so the first
	// guess can be a little over).
	elided = n - 1
	full := ds[n-1].Text
	last := &cut[n-1]
	size := len(full)
	for {
		over := len(decisionsFrom(cut, elided)) - room
		if over <= 0 || size <= cutDecision {
			break
		}
		size = max(cutDecision, size-over-len(cutMark))
		last.Text = opening(full, size)
	}
	return decisionsFrom(cut, elided)
}

const cutMark = " […cut to fit the brief; the full text is in the task's ledger]"

// opening returns s cut to n bytes on a character boundary and marked, or
// s itself when cutting would not make it shorter.
func opening(s string, n int) string {
	if len(s) <= n+len(cutMark) {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	if len(s) > 0 {
		if r, size := utf8.DecodeLastRuneInString(s); r == utf8.RuneError && size <= 1 {
			s = s[:len(s)-1]
		}
	}
	return s + cutMark
}

func phaseSection(t task.Task, p task.Phase, attempt int) string {
	var sb strings.Builder
	sb.WriteString(task.HeadingPhase(p) + "\n\n")
	sb.WriteString(task.LabelTask + " " + string(t.ID) + "\n")
	sb.WriteString(task.LabelAttempt + " " + strconv.Itoa(attempt) + "\n\n")
	if !p.Valid() {
		fmt.Fprintf(&sb, "Unknown phase %q: no job, artifact or schema is defined for it. Stop and tell the operator.\n", p)
		return sb.String()
	}
	sb.WriteString(task.Job(p) + "\n\n")
	sb.WriteString(task.LabelArtifact + " " + task.ArtifactPath(p) + "\n")
	sb.WriteString(task.LabelSentinel + " " + task.SentinelPath + "\n")
	sb.WriteString("Write the artifact first. Write the sentinel only after the artifact is complete: " +
		"the console reads and validates the artifact as soon as the sentinel appears.\n")
	verify := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(t.Verify), "\n", " ; ")), " ")
	if verify == "" {
		verify = "(none configured)"
	}
	sb.WriteString(task.LabelVerify + " " + verify + "\n\n")
	sb.WriteString("The artifact is one JSON value that must follow this schema:\n\n")
	sb.WriteString(fence("json", task.Schema(p)))
	sb.WriteString("\nFor example:\n\n")
	sb.WriteString(fence("json", task.Example(p)))
	return sb.String()
}

func rulesSection(rules string) string {
	body := prose(rules)
	if body == "" {
		body = "No repository rules found."
	}
	return task.HeadingRules + "\n\n" + body + "\n"
}

func gitSection(g *GitState) string {
	var sb strings.Builder
	sb.WriteString(task.HeadingGitState + "\n\n")
	if g == nil {
		sb.WriteString("Not read: the console could not read git state for this worktree.\n")
		return sb.String()
	}
	sb.WriteString("Read by the console from git, not reported by an agent.\n\n")
	sb.WriteString("Branch: " + orUnknown(g.Branch) + "\n")
	sb.WriteString("Head: " + orUnknown(g.Head) + "\n")
	sb.WriteString("Base: " + orUnknown(g.Base) + "\n")
	fmt.Fprintf(&sb, "Ahead of base by %d commit%s, behind by %d.\n", g.Ahead, plural(g.Ahead), g.Behind)
	sb.WriteString(labelledList("Uncommitted changes", g.Dirty))
	sb.WriteString(labelledList("Changed since base", g.Changed))
	return sb.String()
}

func artifactSection(heading string, data []byte) string {
	if len(strings.TrimSpace(string(data))) == 0 {
		return heading + "\n\nNone accepted yet.\n"
	}
	lang, body := prettyJSON(data)
	return heading + "\n\n" + fence(lang, body)
}

// continuityBlocks renders the continuity section as three blocks so they
// can be trimmed apart: the most recent session (fully), its last screen,
// and one line for each older session.
func continuityBlocks(cs []Continuity) []*block {
	head := task.HeadingContinuity + "\n\n"
	if len(cs) == 0 {
		return []*block{{text: head + "None yet: this is the task's first session.\n"}}
	}
	last := cs[len(cs)-1]
	var sb strings.Builder
	sb.WriteString(head)
	sb.WriteString("Previous session: " + sessionName(last) + ".\n")
	sb.WriteString("Ended: " + orNotRecorded(last.Ended) + "\n")
	sb.WriteString("Verdict: " + orNotRecorded(last.Verdict) + "\n")
	sb.WriteString(labelledList("Files changed", last.FilesChanged))
	sb.WriteString(labelledList("Artifacts", last.Artifacts))
	sb.WriteString(labelledList("Errors", last.Errors))
	latest := &block{trim: trimContinuity, text: sb.String(), short: head + trimmedLine + "\n"}
	blocks := []*block{latest}

	screen := "Its last screen: not captured.\n"
	if s := screenText(last.Screen); strings.TrimSpace(s) != "" {
		screen = "Its last screen:\n\n" + fence("text", s)
	}
	blocks = append(blocks, &block{trim: trimScreen, text: screen, short: "Its last screen: trimmed to fit the brief's size budget.\n", within: latest})

	if older := cs[:len(cs)-1]; len(older) > 0 {
		var ob strings.Builder
		ob.WriteString("Earlier sessions, oldest first:\n")
		for _, c := range older {
			fmt.Fprintf(&ob, "- %s. Ended: %s Verdict: %s\n", sessionName(c), sentence(orNotRecorded(c.Ended)), orNotRecorded(c.Verdict))
		}
		blocks = append(blocks, &block{trim: trimOlder, text: ob.String(),
			short: fmt.Sprintf("Earlier sessions: %d, trimmed to fit the brief's size budget.\n", len(older)), within: latest})
	}
	return blocks
}

// sessionName describes a session in one line: its id, then its phase,
// attempt, harness and model.
func sessionName(c Continuity) string {
	var parts []string
	if c.Phase != "" {
		parts = append(parts, "phase "+string(c.Phase))
	}
	parts = append(parts, "attempt "+strconv.Itoa(c.Attempt))
	parts = append(parts, "harness "+orUnknown(c.Harness))
	if m := oneLine(c.Model); m != "" {
		parts = append(parts, "model "+m)
	}
	return orUnknown(c.SessionID) + " (" + strings.Join(parts, ", ") + ")"
}

func deadEndsSection(ds []store.DeadEnd) string {
	if len(ds) == 0 {
		return task.HeadingDeadEnds + "\n\nNone yet.\n"
	}
	var sb strings.Builder
	sb.WriteString(task.HeadingDeadEnds + "\n\n")
	for _, d := range ds {
		fmt.Fprintf(&sb, "- %s, attempt %d: %s\n", d.Phase, d.Attempt, indentRest(prose(d.Text), "  "))
	}
	return sb.String()
}

func orUnknown(s string) string {
	if s = oneLine(s); s == "" {
		return "unknown"
	}
	return s
}

func orNotRecorded(s string) string {
	if s = oneLine(s); s == "" {
		return "not recorded."
	}
	return s
}

// sentence makes sure s ends like a sentence, so that the next one can
// follow it on the same line.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
