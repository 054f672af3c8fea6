package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// FuzzParseBrief: any text the agent is given as a brief is read to a
// known phase, or refused with an error; never a panic. The seeds are real
// briefs of every phase.
func FuzzParseBrief(f *testing.F) {
	for _, p := range task.Phases {
		f.Add(brief.Render(brief.Facts{Task: task.Task{ID: "01ABC", Title: "t", Goal: "g", Verify: "go test ./...", Phase: p}, Phase: p, Attempt: 1}))
	}
	f.Add("## Current phase implement\n- Artifact: `x`\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		b, err := ParseBrief(text)
		if err != nil {
			return
		}
		require.True(t, b.Phase.Valid(), "phase %q", b.Phase)
	})
}
