package coord

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// stallSpec is a harness whose agent shows a prompt, takes the brief and
// then works on nothing until it is stopped.
func stallSpec(name string) session.Spec {
	return session.Spec{
		Name: name, Argv: []string{"/bin/sh", "-c", `printf '` + name + `> '; read -r line; echo working; exec sleep 600`},
		Env:      []string{"PATH"},
		Delivery: session.DeliveryType, Ready: name + `>`, Submit: `\r`,
		Quiet: session.Duration{Duration: 100 * time.Millisecond}, LaunchTimeout: session.Duration{Duration: 10 * time.Second},
		Resubmit: session.ResubmitSubmit,
	}
}

// Files are fenced as well as rows: a process of an older session of the
// task (one that outlived a killed console, with SIGHUP ignored) writes a
// valid artifact and the sentinel into the worktree after the lease was
// taken over by the current session. The artifact is not sealed, the
// refusal says why, and the old process is stopped.
func TestAnOldSessionsArtifactIsNotSealed(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, func(cfg *config.Config) { cfg.Harness["staller"] = stallSpec("staller") })
	id := b.addTask(t, "staller", project.VerifyCommand, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))

	// The old session's process: marked as the task's, by a session that
	// is not the current one, in the worktree, ignoring SIGHUP.
	dir := filepath.Join(b.root, filepath.FromSlash(repo.WorktreesDir), string(id))
	old := exec.Command("nohup", "/bin/sh", "-c",
		`printf '%s' "$ART" > .orchestra/implement.json && touch .orchestra/done && exec sleep 600`)
	old.Dir = dir
	old.Env = append(os.Environ(), session.TaskEnv+"="+string(id), session.SessionEnv+"="+task.NewULID(time.Now().Add(-time.Hour)), // a session made before this one
		"ART="+task.Example(task.PhaseImplement))
	require.NoError(t, old.Start())
	exited := make(chan struct{})
	go func() { _ = old.Wait(); close(exited) }()
	t.Cleanup(func() { _ = old.Process.Kill(); <-exited })

	ev := b.waitEvent(t, 30*time.Second, refusalOf(task.ReasonArtifactStale))
	require.Equal(t, id, ev.TaskID)
	require.Contains(t, ev.Text, "of an older session were alive in the worktree and were stopped")
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the old session's process was not stopped")
	}
	b.barrier(t)
	arts, err := b.st.ArtifactList(context.Background(), id)
	require.NoError(t, err)
	require.Empty(t, arts, "an old session's artifact was sealed")
	require.Empty(t, b.ledger(t, id, kindIs(task.EvArtifactSealed)))
}
