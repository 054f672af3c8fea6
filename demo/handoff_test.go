package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// init lets this test binary act as the scripted agent. It is called in
// init rather than in TestMain so it works whatever TestMain the package
// has (or none), and costs no separate `go build` of the binary.
func init() { agent.MainIfReexec() }

func TestHandoffDemo(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	err = RunHandoff(ctx, &out, HandoffOptions{Fast: true, TempDir: t.TempDir(), Self: self,
		AgentEnv: map[string]string{agent.ReexecEnv: "1"}})
	t.Logf("handoff demo took %s:\n%s", time.Since(start), out.String())
	require.NoError(t, err)
	require.Contains(t, out.String(), "PASSED")
	require.NotContains(t, out.String(), "FAILED")
}

// TestHandoffBriefProofFails holds the brief proof to its word: a brief that
// does not name model A and the file fails it, by name.
func TestHandoffBriefProofFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "machine-b", "record")
	require.NoError(t, os.MkdirAll(rec, 0o755))
	h := &handoffRun{dir: dir, w: &bytes.Buffer{}}
	require.Len(t, h.proveBrief(), 1, "no brief recorded")

	brief := "## Goal\n\nx\n\n" + task.HeadingContinuity + "\n\nPrevious session: s (harness scripted, model other).\nVerdict: ✗ incomplete\n"
	require.NoError(t, os.WriteFile(filepath.Join(rec, "brief-implement-1-1.md"), []byte(brief), 0o644))
	problems := h.proveBrief()
	require.Len(t, problems, 2)
	require.Contains(t, strings.Join(problems, "\n"), HandoffModelA)
	require.Contains(t, strings.Join(problems, "\n"), "calc.go")
}
