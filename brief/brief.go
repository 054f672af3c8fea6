// Package brief renders the text a session starts from. The brief is made
// from stored facts only (the task, the operator's decisions, sealed
// artifacts, git state the console read itself, what earlier sessions left),
// never from a previous session's say-so, and always in authority order:
// what comes first outranks what follows.
//
// Rendering is deterministic byte for byte: the same facts give the same
// brief, so a brief can be golden-tested, hashed and handed off.
package brief

import (
	"strconv"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// DefaultBudget is the size cap of a brief in bytes when Facts.Budget is 0.
// It keeps a brief small enough to paste into an agent's prompt in one go.
const DefaultBudget = 24 << 10

// GitState is the state of the task's worktree as the console read it from
// git, not as an agent reported it.
type GitState struct {
	Branch  string
	Head    string
	Base    string
	Dirty   []string // uncommitted paths
	Ahead   int      // commits on Head not on Base
	Behind  int      // commits on Base not on Head
	Changed []string // files changed since Base
}

// Continuity is what one earlier session of the task left behind.
type Continuity struct {
	SessionID string
	Harness   string
	Model     string
	Attempt   int
	Phase     task.Phase
	// Ended says why the session ended, as a sentence (for example the
	// refusal's sentence).
	Ended string
	// Screen is the session's last screen as plain text.
	Screen       string
	FilesChanged []string
	Artifacts    []string
	// Errors is the refusal and error history of that attempt, one
	// sentence each.
	Errors []string
	// Verdict is the latest verdict line, e.g. verify.Verdict.Line().
	Verdict string
}

// Facts is everything a brief is rendered from.
type Facts struct {
	Task    task.Task
	Phase   task.Phase // the phase this brief is for; empty means Task.Phase
	Attempt int        // the attempt this brief is for; 0 means Task.Attempt
	// Decisions are all of the task's decisions, oldest first.
	Decisions []store.Decision
	// Rules is the repository's rules text (AGENTS.md, CLAUDE.md, config);
	// it may be empty.
	Rules string
	// Git is nil when the console could not read git state.
	Git *GitState
	// Research and Plan are the sealed artifacts' content, nil when none
	// was accepted.
	Research, Plan []byte
	// Continuity lists earlier sessions, most recent last.
	Continuity []Continuity
	DeadEnds   []store.DeadEnd
	// Budget is the brief's size cap in bytes; 0 means DefaultBudget.
	Budget int
}

// Trim steps, in the order Render applies them when a brief is over budget:
// from the bottom of the brief up. The goal, the acceptance list, the human
// decisions and the current phase have no trim step: they are never cut.
const (
	trimScreen     = "continuity screen"
	trimOlder      = "older continuity"
	trimDeadEnds   = "dead ends"
	trimContinuity = "continuity"
	trimResearch   = "accepted research"
	trimPlan       = "accepted plan"
	trimGit        = "git state"
	trimRules      = "repository rules"
	trimDecisions  = "decision texts"
)

// trimOrder is the order trim steps are applied in.
var trimOrder = []string{
	trimScreen, trimOlder, trimDeadEnds, trimContinuity,
	trimResearch, trimPlan, trimGit, trimRules,
	trimDecisions, // applied last, to the decisions block only (see Render)
}

// block is one piece of the brief. A block with a trim key can be replaced
// by its short form when the brief is over budget; short keeps the section's
// heading so that no section ever vanishes.
type block struct {
	trim    string
	text    string
	short   string
	trimmed bool
	// within is the block this one is part of; when that one is trimmed,
	// this one goes with it rather than repeat "trimmed".
	within *block
}

// Render renders the brief for f. Sections come in authority order with the
// headings from package task. When the brief is over budget, whole blocks
// are replaced from the bottom up (see trimOrder) and a last line says what
// was trimmed. The goal, acceptance and current phase are kept whole; when
// the brief is still over budget, older decision texts are cut to their
// opening (each marked), then the oldest decisions are left out with a line
// saying how many and where they are, then the newest is cut; the newest
// decision is never left out. The brief fits its budget unless the goal,
// acceptance, phase and the newest decision's opening alone do not. Escape
// sequences and control characters other than line breaks and tabs are
// removed (task.PlainText).
func Render(f Facts) string {
	budget := f.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	phase := f.Phase
	if phase == "" {
		phase = f.Task.Phase
	}
	attempt := f.Attempt
	if attempt == 0 {
		attempt = f.Task.Attempt
	}
	blocks := []*block{
		{text: title(f.Task)},
		{text: goalSection(f.Task.Goal)},
		{text: acceptanceSection(f.Task.Acceptance)},
		{text: decisionsSection(f.Decisions)},
		{text: phaseSection(f.Task, phase, attempt)},
		section(trimRules, task.HeadingRules, rulesSection(f.Rules), strings.TrimSpace(f.Rules) != ""),
		section(trimGit, task.HeadingGitState, gitSection(f.Git), f.Git != nil),
		section(trimResearch, task.HeadingResearch, artifactSection(task.HeadingResearch, f.Research), len(f.Research) > 0),
		section(trimPlan, task.HeadingPlan, artifactSection(task.HeadingPlan, f.Plan), len(f.Plan) > 0),
	}
	blocks = append(blocks, continuityBlocks(f.Continuity)...)
	blocks = append(blocks, section(trimDeadEnds, task.HeadingDeadEnds, deadEndsSection(f.DeadEnds), len(f.DeadEnds) > 0))

	out := join(blocks, nil, budget)
	var trimmed []string
	for _, step := range trimOrder {
		if len(out) <= budget {
			break
		}
		cut := false
		for _, b := range blocks {
			if b.trim == step && !b.trimmed && len(b.short) < len(b.text) {
				b.trimmed, cut = true, true
			}
		}
		if cut {
			trimmed = append(trimmed, step)
			out = join(blocks, trimmed, budget)
		}
	}
	// Still over: the decisions are what is left to shrink (the goal,
	// acceptance and phase are what the agent cannot work without, and are
	// never cut). Older decisions are cut to their opening first, then the
	// oldest are left out with a line saying so, then the newest is cut to
	// what the budget leaves; each cut says where the rest is.
	if decisions := blocks[3]; len(out) > budget && len(f.Decisions) > 0 {
		trimmed = append(trimmed, trimDecisions)
		out = join(blocks, trimmed, budget)
		room := budget - (len(out) - len(decisions.text))
		decisions.text = fitDecisions(f.Decisions, room)
		out = join(blocks, trimmed, budget)
	}
	// The brief is typed into a pane or handed over as an argument: an
	// escape sequence or a control character from a title, a goal, a
	// decision or an earlier screen would reach the agent as keys.
	return task.PlainText(out)
}

// join renders the blocks, separated by blank lines, and the trim note.
func join(blocks []*block, trimmed []string, budget int) string {
	var sb strings.Builder
	size := 128
	for _, b := range blocks {
		size += len(b.text) + 1
	}
	sb.Grow(size)
	for _, b := range blocks {
		text := b.text
		if b.trimmed {
			text = b.short
		}
		if b.within != nil && b.within.trimmed {
			text = ""
		}
		if text == "" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(text)
	}
	if len(trimmed) > 0 {
		sb.WriteString("\n[trimmed to fit " + strconv.Itoa(budget) + " bytes: " + strings.Join(trimmed, ", ") + "]\n")
	}
	return sb.String()
}

// section makes the block of a whole trimmable section. An empty section
// (its one "none" line) is not trimmable: there is nothing to gain and
// "trimmed" would wrongly suggest something had been there.
func section(step, heading, text string, filled bool) *block {
	if !filled {
		return &block{text: text}
	}
	return &block{trim: step, text: text, short: trimmedSection(heading)}
}

// trimmedSection is what a whole section shrinks to when it is trimmed.
func trimmedSection(heading string) string {
	return heading + "\n\n" + trimmedLine + "\n"
}

const trimmedLine = "Trimmed to fit the brief's size budget."
