package coord

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// fixScript fixes calc in implement.
var fixScript = agent.Script{Phases: map[task.Phase][]agent.Entry{
	task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
}}

// withRemote makes a calc project whose origin is remote (created as a
// bare repository when bare is set) and configures [fleet] remote.
func withRemote(t *testing.T, remote string, bare bool) (string, func(*config.Config)) {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	if bare {
		require.NoError(t, project.Git(root, "init", "-q", "--bare", "-b", "main", remote))
	}
	require.NoError(t, project.Git(root, "remote", "add", "origin", remote))
	return root, func(cfg *config.Config) { cfg.Fleet.Remote = "origin" }
}

// With [fleet] remote set, each accepted phase is committed on the task's
// branch and pushed before the task moves on.
func TestAcceptedPhasesArePushed(t *testing.T) {
	t.Parallel()
	remote := filepath.Join(t.TempDir(), "calc.git")
	root, tweak := withRemote(t, remote, true)
	b := setupIn(t, root, fixScript, tweak, nil, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhasePlan, task.PhaseImplement})
	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	pushed := b.ledger(t, id, kindIs(task.EvBranchPushed))
	require.Len(t, pushed, 2, "after plan, and after implement's gate before the task waits for review:\n%s", b.dump())
	require.Contains(t, pushed[0].Text, "after phase plan")
	require.Contains(t, pushed[1].Text, "after phase implement")
	tk, err := b.st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	out, err := exec.Command("git", "--git-dir", remote, "show", tk.Branch+":calc.go").CombinedOutput()
	require.NoError(t, err, "the branch is on the remote: %s", out)
	require.Equal(t, project.CalcFixed, string(out))
}

// A branch that cannot be pushed is a refusal carrying git's reason, not a
// silent local commit; the work stays committed in this clone.
func TestPushFailureIsARefusalWithGitsReason(t *testing.T) {
	t.Parallel()
	root, tweak := withRemote(t, filepath.Join(t.TempDir(), "no-such-remote.git"), false)
	b := setupIn(t, root, fixScript, tweak, nil, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	refused := b.ledger(t, id, refusalOf(task.ReasonPushFailed))
	require.NotEmpty(t, refused, b.dump())
	require.Contains(t, refused[0].Text, "does not appear to be a git repository", "git's own reason")
	require.Contains(t, refused[0].Text, "committed in this clone only")
	tk, err := b.st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, project.CalcFixed, gitShow(t, root, tk.Branch, "calc.go"))
}

// An engine that launches a task fetches its branch first and starts from
// what another machine pushed; a branch of another repository is refused.
func TestLaunchFetchesTheTaskBranch(t *testing.T) {
	t.Parallel()
	for _, foreign := range []bool{false, true} {
		t.Run(map[bool]string{false: "FromTheRemote", true: "ForeignRefused"}[foreign], func(t *testing.T) {
			t.Parallel()
			remote := filepath.Join(t.TempDir(), "calc.git")
			root, tweak := withRemote(t, remote, true)
			require.NoError(t, project.Git(root, "push", "-q", "origin", "main"))
			b := setupIn(t, root, fixScript, tweak, nil, nil)
			b.stop()
			ctx := context.Background()
			tk, err := Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Verify: project.VerifyCommand,
				Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, time.Now())
			require.NoError(t, err)

			// Another machine's clone pushed a commit on the task's branch.
			other := filepath.Join(t.TempDir(), "other")
			if foreign {
				require.NoError(t, os.Mkdir(other, 0o755))
				require.NoError(t, project.WriteProject(other))
				require.NoError(t, os.WriteFile(filepath.Join(other, "README"), []byte("another project\n"), 0o644))
				require.NoError(t, project.Git(other, "add", "-A"))
				require.NoError(t, project.Git(other, "commit", "-q", "-m", "another repository"))
				require.NoError(t, project.Git(other, "checkout", "-q", "--orphan", "unrelated"))
				require.NoError(t, project.Git(other, "commit", "-q", "-m", "unrelated root"))
				require.NoError(t, project.Git(other, "push", "-q", remote, "unrelated:"+tk.Branch))
			} else {
				require.NoError(t, project.Git(t.TempDir(), "clone", "-q", "-b", "main", remote, other))
				require.NoError(t, os.WriteFile(filepath.Join(other, "NOTES"), []byte("pushed by machine-a\n"), 0o644))
				require.NoError(t, project.Git(other, "checkout", "-q", "-b", tk.Branch))
				require.NoError(t, project.Git(other, "add", "-A"))
				require.NoError(t, project.Git(other, "commit", "-q", "-m", "machine-a: half the work"))
				require.NoError(t, project.Git(other, "push", "-q", "origin", tk.Branch))
			}
			require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))
			b.start(t)
			if foreign {
				ev := b.waitEvent(t, 60*time.Second, refusalOf(task.ReasonBranchForeign))
				require.Contains(t, ev.Text, "root commit")
				return
			}
			last := b.waitEvent(t, 90*time.Second, ended)
			require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
			require.Equal(t, "pushed by machine-a\n", gitShow(t, root, tk.Branch, "NOTES"), "the work pushed elsewhere is kept")
			require.Equal(t, project.CalcFixed, gitShow(t, root, tk.Branch, "calc.go"))
			log, err := exec.Command("git", "--git-dir", remote, "log", "--format=%s", tk.Branch).CombinedOutput()
			require.NoError(t, err)
			require.True(t, strings.Contains(string(log), "machine-a: half the work"), string(log))
		})
	}
}
