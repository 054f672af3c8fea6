package coord

import (
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// VerdictText is a task's latest verdict as `status` shows it beside its
// state: a task that failed never shows ✓ (its last green run, if any, was
// not enough), and a baseline verdict says it is one (verify.Verdict.Line).
func VerdictText(s task.State, v verify.Verdict) string {
	line := v.Line()
	if s == task.StateFailed && strings.HasPrefix(line, "✓ ") {
		return "✗ failed · its last verify: " + strings.TrimPrefix(line, "✓ ")
	}
	return line
}
