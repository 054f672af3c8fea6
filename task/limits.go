package task

import "fmt"

// Sizes a task's operator text may have. A title names the task on one
// line of the console and of `status`; a goal, with each acceptance
// criterion, is typed into every brief. Without a bound a 10 MB title made
// a 10 MB brief; the limits are far above any real task's and refuse such
// a one with its size.
const (
	MaxTitleBytes = 1 << 10
	MaxGoalBytes  = 64 << 10
)

// SizeError is a task field over its limit.
type SizeError struct {
	Field string // "title", "goal" or "acceptance criterion N"
	Size  int
	Limit int
	Hint  string
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("the task's %s is %d bytes, over its limit of %d bytes: %s", e.Field, e.Size, e.Limit, e.Hint)
}

// CheckSizes returns a *SizeError for the first of the title, the goal
// and the acceptance criteria over its limit, or nil.
func CheckSizes(title, goal string, acceptance []string) error {
	if len(title) > MaxTitleBytes {
		return &SizeError{Field: "title", Size: len(title), Limit: MaxTitleBytes, Hint: "give a short title and put the detail in the goal"}
	}
	if len(goal) > MaxGoalBytes {
		return &SizeError{Field: "goal", Size: len(goal), Limit: MaxGoalBytes, Hint: "point the goal at a file in the repository for the rest"}
	}
	for i, a := range acceptance {
		if len(a) > MaxGoalBytes {
			return &SizeError{Field: fmt.Sprintf("acceptance criterion %d", i+1), Size: len(a), Limit: MaxGoalBytes,
				Hint: "point it at a file in the repository for the rest"}
		}
	}
	return nil
}
