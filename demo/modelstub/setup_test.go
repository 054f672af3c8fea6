package modelstub

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// bundle is what a real-CLI test runs with: a stub server, a temporary
// home and a git repository to work in.
type bundle struct {
	srv  *Server
	base string
	home string
	work string
}

func setup(t *testing.T, rules []Rule) bundle {
	t.Helper()
	srv := New(rules)
	srv.Logf = t.Logf
	base, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	home, work := t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "stub@example.invalid"},
		{"config", "user.name", "stub"},
	} {
		out, err := exec.Command("git", append([]string{"-C", work}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(work, "go.mod"), []byte("module example.com/calc\n\ngo 1.21\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(work, "calc.go"), []byte(calcGo), 0o644))
	require.NoError(t, SeedHome(home, work))
	return bundle{srv: srv, base: base, home: home, work: work}
}

// calcGo is the bug the scripted implement phase fixes.
const calcGo = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n"

// renderBrief renders a brief for phase p by hand from the task constants,
// in authority order, the way package brief does.
func renderBrief(p task.Phase) string {
	var b strings.Builder
	section := func(heading string, lines ...string) {
		b.WriteString(heading + "\n")
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	section(task.HeadingGoal, "Make Add return the sum of its arguments.")
	section(task.HeadingAcceptance, "- go test ./... passes")
	section(task.HeadingDecisions, "None yet.")
	section(task.HeadingPhase(p),
		task.Job(p),
		task.LabelTask+" 01STUBTASK",
		task.LabelAttempt+" 1",
		task.LabelArtifact+" "+task.ArtifactPath(p),
		task.LabelSentinel+" "+task.SentinelPath,
		task.LabelVerify+" go vet ./...",
		"Schema:", task.Schema(p))
	section(task.HeadingRules, "None.")
	section(task.HeadingGitState, "Branch main, clean.")
	section(task.HeadingResearch, "None yet.")
	section(task.HeadingPlan, "None yet.")
	section(task.HeadingContinuity, "This is the first session.")
	section(task.HeadingDeadEnds, "None.")
	return b.String()
}

// requireAuthorityOrder checks that text holds every brief heading, in
// authority order.
func requireAuthorityOrder(t *testing.T, text string, p task.Phase) {
	t.Helper()
	at := -1
	for _, h := range []string{task.HeadingGoal, task.HeadingAcceptance, task.HeadingDecisions,
		task.HeadingPhase(p), task.HeadingRules, task.HeadingGitState,
		task.HeadingResearch, task.HeadingPlan, task.HeadingContinuity, task.HeadingDeadEnds} {
		i := strings.Index(text, h)
		require.Greater(t, i, at, "heading %q missing or out of order in:\n%s", h, text)
		at = i
	}
}
