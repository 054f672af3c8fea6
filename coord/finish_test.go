package coord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
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
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// fixedScript is a script whose implement attempt fixes the calc project.
func fixedScript() agent.Script {
	return agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}
}

// greenTask runs a one-phase task to a green verdict and returns its id.
func greenTask(t *testing.T, b *bundle) task.ID {
	t.Helper()
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	return id
}

// The end of the loop: approve says where the work is and how to merge it,
// merge brings it into the base branch, which then holds the change.
func TestApproveNamesTheBranchAndMergeBringsItIn(t *testing.T) {
	t.Parallel()
	b := setup(t, fixedScript(), nil)
	id := greenTask(t, b)
	tk := b.taskView(t, id).Task
	awaiting := b.ledger(t, id, kindIs(task.EvTaskAwaiting))
	require.Len(t, awaiting, 1)
	head := strings.TrimSpace(gitOut(t, b.root, "rev-parse", tk.Branch))
	require.Contains(t, awaiting[0].Text, "Committed "+head[:10]+" on "+tk.Branch, "the commit is shown by its leading digits, as git abbreviates")

	ctx := context.Background()
	res, err := b.c.Do(ctx, Command{Kind: CmdMerge, TaskID: id})
	require.ErrorContains(t, err, "approve it first")
	require.Empty(t, res.Message)

	res, err = b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: id, Author: "ana"})
	require.NoError(t, err)
	want := "The work is on branch " + tk.Branch + ", 1 commit ahead of main; merge it with `orchestra-tui merge " + id.Short() + "` (or `git merge " + tk.Branch + "`)."
	require.Contains(t, res.Message, want)
	done := b.ledger(t, id, kindIs(task.EvTaskCompleted))
	require.Len(t, done, 1)
	require.Equal(t, "Approved by ana. "+want, done[0].Text)

	res, err = b.c.Do(ctx, Command{Kind: CmdMerge, TaskID: id})
	require.NoError(t, err)
	require.Contains(t, res.Message, "Merged "+tk.Branch+" into main by fast-forward: 1 commit, now at "+head[:10])
	require.Equal(t, project.CalcFixed, gitShow(t, b.root, "main", "calc.go"))
	require.Equal(t, project.CalcFixed, readFile(t, filepath.Join(b.root, "calc.go")), "the main checkout has the change")
	require.Len(t, b.ledger(t, id, kindIs(task.EvBranchMerged)), 1)
}

// A merge that would conflict is refused before anything is touched, and
// the refusal says so.
func TestMergeConflictIsRefusedAndLeavesTheRepositoryAlone(t *testing.T) {
	t.Parallel()
	b := setup(t, fixedScript(), func(c *config.Config) { c.Finalise.Merge = "no-ff" })
	id := greenTask(t, b)
	ctx := context.Background()
	_, err := b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: id})
	require.NoError(t, err)

	// Meanwhile someone changed the same lines on main.
	require.NoError(t, os.WriteFile(filepath.Join(b.root, "calc.go"), []byte(strings.ReplaceAll(project.CalcBroken, "a - b", "b - a")), 0o644))
	require.NoError(t, project.Git(b.root, "commit", "-qam", "calc: someone else's fix"))
	before := treeHashes(t, b.root)

	_, err = b.c.Do(ctx, Command{Kind: CmdMerge, TaskID: id})
	require.Error(t, err)
	require.Contains(t, err.Error(), "calc.go")
	require.Contains(t, err.Error(), "nothing was changed")
	refusals := b.ledger(t, id, refusalOf(task.ReasonMergeConflict))
	require.Len(t, refusals, 1)
	require.Contains(t, refusals[0].Text, "the repository is unchanged")
	require.Equal(t, before, treeHashes(t, b.root), "the repository is byte-identical")
}

// A failed task retried runs again from the phase it failed in, with a
// fresh attempt budget and its dead ends in the brief, and finishes green
// once its script is fixed.
func TestRetryAFailedTaskFinishesGreenOnAFixedScript(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, func(c *config.Config) { c.Lease.MaxAttempts = 1 })
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskFailed, last.Kind, b.dump())

	// Fix the script: the next implement attempt edits calc.go.
	sc := fixedScript()
	zero := 0
	sc.PaceMS, sc.RecordDir = &zero, b.record
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(b.script, data, 0o644))

	ctx := context.Background()
	_, err = b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: id})
	require.Error(t, err, "a failed task cannot be approved")
	res, err := b.c.Do(ctx, Command{Kind: CmdRetry, TaskID: id, Author: "ana"})
	require.NoError(t, err)
	require.Contains(t, res.Message, "fresh attempt budget")
	retried := b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskRetried))
	require.Equal(t, "Retried by ana: queued for phase implement with a fresh budget of 1 attempt; 1 dead end kept for the brief.", retried.Text)

	last = b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	tv := b.taskView(t, id)
	require.Equal(t, verify.StatusOK, tv.Verdict.Status)
	require.Equal(t, 1, tv.Task.Attempt)
	brief := b.recordedBrief(task.PhaseImplement, 1, 2)
	require.Contains(t, brief, "left the tests failing", "the retried attempt's brief names the dead end")

	_, err = b.c.Do(ctx, Command{Kind: CmdRetry, TaskID: id})
	require.ErrorContains(t, err, "only a failed or cancelled task can be retried")
}

// The offline retry (no console) goes through the coordinator's own
// command code: the same transition and text.
func TestRetryOfflineWritesTheSameTransition(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, func(c *config.Config) { c.Lease.MaxAttempts = 1 })
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	require.Equal(t, task.EvTaskFailed, b.waitEvent(t, 90*time.Second, ended).Kind, b.dump())
	b.stop()

	ctx := context.Background()
	cfg := b.cfg
	cfg.Lease.MaxAttempts = 3
	c, err := New(Params{Store: b.st, Repo: b.repo, Config: cfg})
	require.NoError(t, err)
	_, err = c.ApplyOffline(ctx, Command{Kind: CmdRetry, TaskID: id, Author: "ana"})
	require.NoError(t, err)
	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateQueued, tk.State)
	require.Zero(t, tk.Attempt)
	evs := b.ledger(t, id, kindIs(task.EvTaskRetried))
	require.Len(t, evs, 1)
	require.Equal(t, "Retried by ana: queued for phase implement with a fresh budget of 3 attempts; 1 dead end kept for the brief.", evs[0].Text)
	_, err = c.ApplyOffline(ctx, Command{Kind: CmdRetry, TaskID: id, Author: "ana"})
	require.ErrorContains(t, err, "only a failed or cancelled task can be retried")
}

// With [finalise] push, approve pushes the branch and opens a pull request
// through gh whose body carries the goal, the verdict and the events. gh is
// a stand-in script here: GitHub is a paid, remote service.
func TestApproveWithPushPushesAndOpensAPullRequest(t *testing.T) {
	bin := t.TempDir()
	args := filepath.Join(t.TempDir(), "gh-args")
	require.NoError(t, os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > "+args+"\necho https://github.invalid/o/r/pull/7\n"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	remote := t.TempDir()
	require.NoError(t, project.Git(remote, "init", "-q", "--bare"))
	b := setup(t, fixedScript(), func(c *config.Config) { c.Finalise.Push = true })
	require.NoError(t, project.Git(b.root, "remote", "add", "origin", remote))
	id := greenTask(t, b)
	tk := b.taskView(t, id).Task

	_, err := b.c.Do(context.Background(), Command{Kind: CmdApprove, TaskID: id})
	require.NoError(t, err)
	pushed := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvBranchPushed || e.Kind == task.EvRefusal && e.Reason == task.ReasonPushFailed
	})
	require.Equal(t, task.EvBranchPushed, pushed.Kind, pushed.Text)
	require.Equal(t, "Pushed "+tk.Branch+" to origin. Pull request: https://github.invalid/o/r/pull/7", pushed.Text)
	require.Equal(t, gitOut(t, b.root, "rev-parse", tk.Branch), gitOut(t, remote, "rev-parse", tk.Branch), "the remote has the branch")

	raw, err := os.ReadFile(args)
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	require.Equal(t, []string{"pr", "create", "--head", tk.Branch, "--title", tk.Title, "--body"}, got[:7])
	body := got[7]
	require.Contains(t, body, "## Goal\n\n"+strings.TrimSpace(project.Goal))
	require.Contains(t, body, "## Verdict\n\n✓")
	require.Contains(t, body, "## Events\n\n1 session,")
	require.Equal(t, []string{"--base", "main"}, got[8:])
}

func gitOut(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := runGit(dir, args...)
	require.NoError(t, err, out)
	return strings.TrimSpace(out)
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// treeHashes hashes every file of the repository, .git included and the
// console's own .orchestra/ (its store) excluded.
func treeHashes(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == task.StateDir {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
