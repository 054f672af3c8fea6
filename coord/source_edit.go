package coord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// edited compares an issue as it reads now with the task made from it
// and says a difference, once, as a human decision quoting what changed:
// typed into the live pane as a comment's correction is, or, before
// launch, rendered in the brief the agent starts from. The task's own
// fields are not rewritten, and above all not its verify command: the
// decision says a changed verify block takes effect only when the
// operator adds the task again. The decision's id is derived from the
// issue and the edited text (EditDecisionID), so every engine on the
// store, and this one after a restart, records it once. Gitea and GitHub
// name the issue's author, not its editor: an edit counts only while the
// author may write; anything else is a refusal the operator sees.
func (s *Source) edited(ctx context.Context, is forge.Issue) error {
	s.mu.Lock()
	sc := s.issues[is.Number]
	s.mu.Unlock()
	if sc == nil || sc.done || sc.id != IssueTaskID(s.cfg.Key, is.Number) {
		return nil // ended, or not a task made from this issue
	}
	now := s.taskOf(is)
	sum := editSum(now)
	s.mu.Lock()
	said := sc.editSaid == sum
	s.mu.Unlock()
	if said {
		return nil
	}
	t, err := s.st.TaskGet(ctx, sc.id)
	if err != nil || t.State.Terminal() {
		return err
	}
	text := editText(is.Number, t, now)
	if text != "" {
		ok, err := s.mayWrite(ctx, is.Author)
		if err != nil {
			return err
		}
		cmd := Command{Kind: CmdCorrect, TaskID: sc.id, Text: s.clip(text), Author: s.author(is.Author),
			DecisionID: EditDecisionID(s.cfg.Key, is.Number, sum)}
		if !ok {
			cmd.Kind = CmdRefuse
			cmd.Text = fmt.Sprintf("An edit of %s, whose author %s may not correct this task, was not delivered: %s",
				is.URL, task.PlainLine(is.Author), task.PlainLine(clipTo(text, 200)))
		}
		if _, err := s.do(ctx, cmd); err != nil {
			if again, gerr := s.st.TaskGet(ctx, sc.id); gerr == nil && again.State.Terminal() {
				return nil
			}
			return fmt.Errorf("edit of #%d: %w", is.Number, err)
		}
	}
	s.mu.Lock()
	sc.editSaid = sum
	s.mu.Unlock()
	return nil
}

// EditDecisionID is the decision id of an edit of issue number whose
// text, read as a task, hashes to sum: the same on every engine, and a
// new one for each different text.
func EditDecisionID(key string, number int, sum string) string {
	return derivedULID(0, fmt.Sprintf("%s issue %d edit %s", key, number, sum))
}

// editSum hashes what a task takes from its issue: title, goal,
// acceptance, verify, harness, model, pipeline and capabilities.
func editSum(t task.Task) string {
	h := sha256.New()
	for _, f := range []string{t.Title, t.Goal, strings.Join(t.Acceptance, "\n"), t.Verify, t.Harness, t.Model,
		t.Pipeline.String(), strings.Join(t.Capabilities, ",")} {
		fmt.Fprintf(h, "%d:%s\n", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// editText quotes what changed between the task made from issue n (was)
// and the issue as it reads now, or "" when nothing did. Fields the
// issue leaves empty (no harness label) are not changes: the task took
// the engine's default.
func editText(n int, was, now task.Task) string {
	var b strings.Builder
	quote := func(what, from, to string) {
		fmt.Fprintf(&b, "\n- The %s changed from «%s» to «%s».", what, from, to)
	}
	if was.Title != now.Title {
		quote("title", was.Title, now.Title)
	}
	if was.Goal != now.Goal {
		fmt.Fprintf(&b, "\n- The goal changed. It was:\n%s\nIt now reads:\n%s", indent(was.Goal), indent(now.Goal))
	}
	if !slices.Equal(was.Acceptance, now.Acceptance) {
		fmt.Fprintf(&b, "\n- The acceptance criteria changed. They were:\n%s\nThey now are:\n%s",
			indent(strings.Join(was.Acceptance, "\n")), indent(strings.Join(now.Acceptance, "\n")))
	}
	if now.Harness != "" && was.Harness != now.Harness {
		quote("harness label", was.Harness, now.Harness)
	}
	if len(now.Pipeline) > 0 && !slices.Equal(was.Pipeline, now.Pipeline) {
		quote("pipeline label", was.Pipeline.String(), now.Pipeline.String())
	}
	if !slices.Equal(was.Capabilities, now.Capabilities) && len(now.Capabilities) > 0 {
		quote("capability labels", strings.Join(was.Capabilities, ", "), strings.Join(now.Capabilities, ", "))
	}
	if was.Verify != now.Verify {
		fmt.Fprintf(&b, "\n- The verify block changed from «%s» to «%s». It does NOT take effect for this task: "+
			"the verify gate still runs «%s» until the operator accepts the new command (adds the task again).",
			was.Verify, now.Verify, was.Verify)
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("Issue #%d was edited since this task was made from it:", n) + b.String() +
		"\nHarness, pipeline and capability changes also take effect only through the operator."
}

func indent(s string) string {
	if s == "" {
		return "    (empty)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
