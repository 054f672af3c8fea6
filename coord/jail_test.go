package coord

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An agent turns its worktree's .orchestra/ into a symlink to a directory
// outside the worktree that holds a file named done (and an artifact). The
// console refuses, records the refusal, and touches nothing outside: the
// file named done is still there.
func TestSymlinkedStateDirIsRefusedAndNothingOutsideIsTouched(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	done := filepath.Join(outside, "done")
	require.NoError(t, os.WriteFile(done, []byte("finished\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "implement.json"), []byte(task.Example(task.PhaseImplement)), 0o600))
	// The agent shows a prompt, takes the brief's first line, swaps its
	// state directory for the link and waits to be stopped.
	script := `printf 'escaper> '; read -r line; rm -rf .orchestra && ln -s "$OUTSIDE" .orchestra && echo swapped; exec sleep 600`
	b := setup(t, agent.Script{}, func(cfg *config.Config) {
		cfg.Harness["escaper"] = session.Spec{
			Name: "escaper", Argv: []string{"/bin/sh", "-c", script},
			Env: []string{"PATH"}, SetEnv: map[string]string{"OUTSIDE": outside},
			Delivery: session.DeliveryType, Ready: `escaper>`, Submit: `\r`,
			Quiet: session.Duration{Duration: 100 * time.Millisecond}, LaunchTimeout: session.Duration{Duration: 10 * time.Second},
			Resubmit: session.ResubmitSubmit,
		}
	})
	id := b.addTask(t, "escaper", project.VerifyCommand, task.Pipeline{task.PhaseImplement})
	ev := b.waitEvent(t, 30*time.Second, refusalOf(task.ReasonPathOutside))
	require.Equal(t, id, ev.TaskID)
	require.Contains(t, ev.Text, task.SentinelPath)
	b.barrier(t)

	_, err := os.Stat(done)
	require.NoError(t, err, "the console removed a file outside the worktree")
	for _, e := range b.ledger(t, id, kindIs(task.EvArtifactSealed)) {
		t.Fatalf("an artifact outside the worktree was sealed: %s", e.Text)
	}
}
