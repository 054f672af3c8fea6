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

// The state labels the source keeps on a task's issue, one at a time.
var stateLabels = []string{"orchestra:running", "orchestra:needs-you", "orchestra:review", "orchestra:failed"}

// stateLabel is the label of a task's state, or "" for none.
func stateLabel(s task.State) string {
	switch s {
	case task.StateLeased, task.StateRunning:
		return "orchestra:running"
	case task.StateParked:
		// Held: nothing moves until a human unparks it.
		return "orchestra:needs-you"
	case task.StateAwaitingReview, task.StatePullOpen:
		return "orchestra:review"
	case task.StateFailed:
		return "orchestra:failed"
	}
	return ""
}

// StatusBody is the status comment of a task: phase, state, the latest
// verdict with its test counts, and why it is in its state.
func StatusBody(st store.TaskStatus) string {
	var b strings.Builder
	b.WriteString(StatusMarker + "\n")
	fmt.Fprintf(&b, "**orchestra-tui** task `%s`\n\n", st.ID.Short())
	fmt.Fprintf(&b, "- state: **%s**\n", st.State)
	if st.Phase != "" {
		fmt.Fprintf(&b, "- phase: %s (attempt %d)\n", st.Phase, st.Attempt)
	}
	if st.Verdict != nil {
		fmt.Fprintf(&b, "- verdict: %s\n", oneLine(task.PlainText(st.Verdict.Line())))
	} else {
		b.WriteString("- verdict: not verified yet\n")
	}
	if st.Reason != "" {
		fmt.Fprintf(&b, "- reason: %s\n", oneLine(task.PlainText(st.Reason)))
	}
	return b.String()
}

// status keeps issue n's status comment and state label in step with its
// task: the comment is posted once and then edited in place, and only
// when what it says changed.
func (s *Source) status(ctx context.Context, n int, all map[task.ID]store.TaskStatus) (err error) {
	s.mu.Lock()
	sc := s.issues[n]
	id, statusID, last, label, labelled := sc.id, sc.statusID, sc.statusBody, sc.label, sc.labelled
	s.mu.Unlock()
	st, ok := all[id]
	if !ok {
		return nil
	}
	defer func() {
		// An ended task's comment and label are final once set: the
		// issue is let go.
		if st.State.Terminal() && err == nil {
			s.mu.Lock()
			sc.done = true
			s.mu.Unlock()
		}
	}()
	body := StatusBody(st)
	if body != last {
		if statusID != 0 {
			err := s.cfg.Forge.EditComment(ctx, statusID, body)
			switch {
			case errors.Is(err, forge.ErrNotFound):
				// Someone deleted the status comment on the forge:
				// post a new one rather than fail every poll.
				statusID = 0
			case err != nil:
				return err
			}
		}
		if statusID == 0 {
			cid, err := s.cfg.Forge.Comment(ctx, n, body)
			if err != nil {
				return err
			}
			statusID = cid
		}
		s.mu.Lock()
		sc.statusID, sc.statusBody = statusID, body
		s.mu.Unlock()
	}
	if want := stateLabel(st.State); want != label || !labelled {
		var add, remove []string
		for _, l := range stateLabels {
			if l == want {
				add = append(add, l)
			} else {
				remove = append(remove, l)
			}
		}
		if err := s.cfg.Forge.SetLabels(ctx, n, add, remove); err != nil {
			return err
		}
		s.mu.Lock()
		sc.label, sc.labelled = want, true
		s.mu.Unlock()
	}
	return nil
}

// statuses reads every task's status line at once, for status.
func (s *Source) statuses(ctx context.Context) (map[task.ID]store.TaskStatus, error) {
	list, err := s.st.TaskStatusList(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[task.ID]store.TaskStatus, len(list))
	for _, st := range list {
		out[st.ID] = st
	}
	return out, nil
}
