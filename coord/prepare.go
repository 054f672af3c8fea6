package coord

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Prepare fills a new task's coordinator-owned fields (id, state, phase,
// base commit, branch, times) and validates it. The CLI uses it to add a
// task straight to the store when no console is running.
func Prepare(t task.Task, r *repo.Repo, now time.Time) (task.Task, error) {
	if len(t.Pipeline) == 0 {
		t.Pipeline = task.DefaultPipeline()
	}
	t.Title = strings.TrimSpace(t.Title)
	if t.Title == "" {
		t.Title = firstLine(t.Goal)
	}
	if err := t.Validate(); err != nil {
		return task.Task{}, err
	}
	if t.ID == "" {
		t.ID = task.NewID(now)
	}
	if t.BaseCommit == "" {
		head, err := r.Head()
		if err != nil {
			return task.Task{}, fmt.Errorf("read HEAD of %s: %w", r.Root, err)
		}
		t.BaseCommit = head
	}
	if t.Branch == "" {
		t.Branch = "orchestra/" + strings.ToLower(string(t.ID))
	}
	if t.Repo == "" {
		t.Repo = "."
	}
	t.Begin(now)
	if t.Phase == "" {
		t.Phase = t.Pipeline.First()
	}
	if !t.Pipeline.Has(t.Phase) {
		return task.Task{}, fmt.Errorf("phase %q is not in the pipeline %s", t.Phase, t.Pipeline)
	}
	return t, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

func sortStrings(s []string) { sort.Strings(s) }
