package modelstub

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// FuzzParseBrief: any message text the model stub reads as a brief yields
// a known phase, or nothing; never a panic.
func FuzzParseBrief(f *testing.F) {
	for _, p := range task.Phases {
		f.Add(brief.Render(brief.Facts{Task: task.Task{ID: "01ABC", Title: "t", Goal: "g", Verify: "go test ./...", Phase: p}, Phase: p, Attempt: 2}))
	}
	f.Add("<pasted>## Current phase plan\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		b, ok := ParseBrief(text)
		if !ok {
			return
		}
		require.True(t, b.Phase.Valid(), "phase %q", b.Phase)
	})
}
