package coord

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// reviews reads the line comments of the pull request of issue n's task,
// once the task has one: an allowed reviewer's comment becomes a decision
// anchored to its file and line (typed into the live pane, or queued for
// the next brief while the task waits in pr-open, as a comment made in
// the Diff tab is), anyone else's a refusal. Like an issue comment, each
// has an id derived from the forge's, so it is one decision in the store
// however often and by however many engines it is read.
func (s *Source) reviews(ctx context.Context, n int) (err error) {
	s.mu.Lock()
	sc := s.issues[n]
	id, pr, done := sc.id, sc.pull, sc.done
	s.mu.Unlock()
	if done {
		return nil
	}
	if pr == 0 {
		t, err := s.st.TaskGet(ctx, id)
		if err != nil {
			return err
		}
		if t.State != task.StatePullOpen {
			return nil // no pull request yet (or its number is read on the next tick)
		}
		d, err := ReadPull(ctx, s.st, id)
		if err != nil || d == nil {
			return err
		}
		pr = d.Number
		s.mu.Lock()
		sc.pull = pr
		s.mu.Unlock()
	}
	if err := s.loadReviews(ctx, pr, sc); err != nil {
		return err
	}
	s.mu.Lock()
	since := sc.reviewSince
	s.mu.Unlock()
	list, err := s.cfg.Forge.ReviewComments(ctx, pr, since)
	if err != nil {
		return err
	}
	handled := 0 // recorded first, then the cursor (source_cursor.go)
	defer func() { err = errors.Join(err, s.saveReviews(ctx, pr, sc, list, handled)) }()
	for i, cm := range list {
		handled = i
		s.mu.Lock()
		seen := sc.reviewSeen[cm.ID]
		s.mu.Unlock()
		if seen {
			continue
		}
		if err := s.deliverReview(ctx, id, n, pr, cm); err != nil {
			return err
		}
		s.mu.Lock()
		sc.reviewSeen[cm.ID] = true
		s.mu.Unlock()
	}
	handled = len(list)
	return nil
}

// deliverReview records one line comment of pull request pr.
func (s *Source) deliverReview(ctx context.Context, id task.ID, n, pr int, cm forge.Comment) error {
	ok, err := s.mayWrite(ctx, cm.Author)
	if err != nil {
		return err
	}
	text := s.clip(task.PlainText(cm.Body))
	if strings.TrimSpace(text) == "" {
		return nil
	}
	cmd := Command{Kind: CmdCorrect, TaskID: id, Text: text, Author: s.author(cm.Author),
		DecisionID: ReviewCommentDecisionID(s.cfg.Key, cm)}
	if cm.Path != "" && cm.Line > 0 {
		cmd.Anchor = &store.Anchor{File: task.PlainLine(cm.Path), Line: cm.Line}
	}
	if !ok {
		cmd.Kind, cmd.Anchor = CmdRefuse, nil
		cmd.Text = fmt.Sprintf("Review comment %s on pull request #%d by %s, who may not correct this task, was not delivered: %s",
			cm.URL, pr, task.PlainLine(cm.Author), task.PlainLine(clipTo(text, 200)))
	}
	if _, err := s.do(ctx, cmd); err != nil {
		if now, gerr := s.st.TaskGet(ctx, id); gerr == nil && now.State.Terminal() {
			return nil // merged or cancelled meanwhile: it reaches no one
		}
		return fmt.Errorf("review comment %d on pull request #%d (issue #%d): %w", cm.ID, pr, n, err)
	}
	return nil
}

// ReviewCommentDecisionID is the decision id of a line comment of a pull
// request's review. Review comments are numbered apart from issue
// comments on GitHub, so the id says which kind it is.
func ReviewCommentDecisionID(key string, comment forge.Comment) string {
	return derivedULID(comment.Created.UnixMilli(), fmt.Sprintf("%s review comment %d", key, comment.ID))
}
