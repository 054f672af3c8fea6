package ui

import (
	"strings"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// listSearch is the `/` filter: text typed to narrow the list to the tasks
// whose id, title, state, phase or flag contain it, in any case.
type listSearch struct {
	query string
}

func (s listSearch) match(tv coord.TaskView) bool {
	if s.query == "" {
		return true
	}
	q := strings.ToLower(s.query)
	t := tv.Task
	for _, f := range []string{string(t.ID), t.Title, string(t.State), string(t.Phase), taskFlag(tv)} {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}
