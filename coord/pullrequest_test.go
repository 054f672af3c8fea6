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
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/forge/github/githubstub"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// pullBundle is a coordinator with [finalise] pr against a stub of
// GitHub's REST API on 127.0.0.1 and a real bare remote, and a task green
// and awaiting review.
func pullBundle(t *testing.T) (*bundle, *githubstub.Stub, task.ID) {
	t.Helper()
	remote := t.TempDir()
	require.NoError(t, project.Git(remote, "init", "-q", "--bare"))
	gh := githubstub.New(t, "team", "app")
	gh.Token = "ghp_pr_test_token"
	gh.ResolveRef = func(ref string) (string, bool) {
		out, err := exec.Command("git", "--git-dir", remote, "rev-parse", "--verify", "-q", "refs/heads/"+ref).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	tok := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tok, []byte(gh.Token+"\n"), 0o600))
	b := setupHooked(t, fixedScript(), func(c *config.Config) {
		c.Finalise.PR = true
		c.Source = config.Source{Forge: "github", URL: gh.URL, Repo: "team/app", TokenFile: tok}
	}, func(c *Coordinator) { c.pr.min, c.pr.max = 50*time.Millisecond, 200*time.Millisecond })
	require.NoError(t, project.Git(b.root, "remote", "add", "origin", remote))
	require.NoError(t, project.Git(b.root, "push", "-q", "origin", "main"))
	id := greenTask(t, b)
	return b, gh, id
}

// Approving with [finalise] pr pushes the branch and opens a pull request
// whose body holds the goal, the verdict with its counts and the
// attempts; the row shows the pull request and its checks as they change
// on the forge; merging it there completes the task.
func TestApproveWithPROpensAPullRequestAndItsMergeCompletesTheTask(t *testing.T) {
	t.Parallel()
	b, gh, id := pullBundle(t)
	tk := b.taskView(t, id).Task
	ctx := context.Background()
	res, err := b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: id, Author: "ana"})
	require.NoError(t, err, b.dump())
	require.Contains(t, res.Message, "pull request #1 opened: https://github.com/team/app/pull/1")
	b.barrier(t)
	tv := b.taskView(t, id)
	require.Equal(t, task.StatePullOpen, tv.Task.State)
	require.NotNil(t, tv.PR)
	require.Equal(t, 1, tv.PR.Number)
	require.Equal(t, "PR #1", PullLabel(tv.PR), "no checks yet")
	require.Equal(t, []int{1}, gh.Pulls())
	require.Equal(t, gitOut(t, b.root, "rev-parse", tk.Branch), gitOut(t, b.root, "rev-parse", "origin/"+tk.Branch), "the branch was pushed")
	title, body := gh.PullBody(1)
	require.Equal(t, tk.Title, title)
	require.Contains(t, body, "## Goal\n\n"+strings.TrimSpace(project.Goal))
	require.Contains(t, body, "## Verdict\n\n✓ ok · tests green")
	require.Regexp(t, `; [1-9]\d* passed, 0 failed, \d+ skipped\.`, body, "the verdict's test counts")
	require.Contains(t, body, "## Decisions\n\nNo human corrections.")
	require.Contains(t, body, "## Attempts\n\n")
	require.Contains(t, body, "1 session in all.")
	require.NotContains(t, body, "Closes #", "the task did not come from an issue")
	opened := b.ledger(t, id, kindIs(task.EvPullOpened))
	require.Len(t, opened, 1)
	require.Contains(t, opened[0].Text, "Approved by ana. Pushed "+tk.Branch+" to origin; pull request #1 into main")
	require.NotContains(t, b.dump(), gh.Token, "the token is in no event")

	gh.SetCheckRun(1, "test", "in_progress", "")
	b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvPullUpdated && strings.Contains(e.Text, "checks pending")
	})
	require.Equal(t, "PR #1 …", PullLabel(b.taskView(t, id).PR))
	gh.SetCheckRun(1, "test", "completed", "success")
	b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvPullUpdated && strings.Contains(e.Text, "checks success")
	})
	require.Equal(t, "PR #1 ✓", PullLabel(b.taskView(t, id).PR))

	gh.Merge(1)
	ev := b.waitEvent(t, 30*time.Second, kindIs(task.EvBranchMerged))
	require.Equal(t, "Pull request #1 was merged on the forge: the task is merged.", ev.Text)
	b.barrier(t)
	require.Equal(t, task.StateMerged, b.taskView(t, id).Task.State)
	files, err := filepath.Glob(b.storeAt + "*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotContains(t, string(data), gh.Token, "the token is in no store row: %s", f)
	}
}

// A review requesting changes on the pull request's head sends the task
// back to implement with no attempt charged, as the Diff tab's C does.
func TestChangesRequestedOnThePullRequestSendsTheTaskBack(t *testing.T) {
	t.Parallel()
	b, gh, id := pullBundle(t)
	_, err := b.c.Do(context.Background(), Command{Kind: CmdApprove, TaskID: id, Author: "ana"})
	require.NoError(t, err, b.dump())
	gh.AddReview(1, "bob", "CHANGES_REQUESTED")
	ev := b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskRequeued))
	require.Equal(t, "Back to phase implement: changes requested by a review of pull request #1 with 0 open comments; no attempt charged.", ev.Text)
	require.Equal(t, id, ev.TaskID)
}

// The body says "Closes #N" for a task from issue N and lists the human
// decisions with where a review comment was made; forge text is plain.
func TestPullBodyClosesTheIssueAndListsTheDecisions(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tk := task.Task{ID: "01JTASK", Title: "t", Goal: "Make it \x1b[31mred\x1b[0m", Verify: "go test ./..."}
	evs := []task.Event{{Kind: task.EvTaskAdded, Data: []byte(`{"issue": 7}`), At: at}, {Kind: task.EvSessionLaunched, Text: "Session launched", At: at}}
	ds := []store.Decision{{Text: "use 8080", Author: "ana", At: at}, {Text: "name it", Author: "bob", At: at, Anchor: &store.Anchor{File: "a.go", Line: 3}}}
	v := &task.Verdict{Status: task.VerdictOK, Passed: 12, Counted: true}
	body := PullBody(tk, v, ds, evs, issueOf(evs))
	require.True(t, strings.HasPrefix(body, "Closes #7\n\n"), body)
	require.Contains(t, body, "## Goal\n\nMake it red\n")
	require.Contains(t, body, "- 2026-12-01 10:00, by ana: use 8080\n")
	require.Contains(t, body, "- 2026-12-01 10:00, by bob on a.go:3: name it\n")
	require.Contains(t, body, "✓ ok · tests green (12 passed): `go test ./...`, re-run by orchestra-tui; 12 passed, 0 failed, 0 skipped.")
	require.Contains(t, body, "1 session in all.")

	long := PullBody(tk, v, append(ds, store.Decision{Text: strings.Repeat("word ", 20000), Author: "ana", At: at}), evs, 7)
	require.Less(t, len(long), 65536, "GitHub's limit")
	require.True(t, strings.HasSuffix(long, "orchestra-tui task 01JTASK\n"))
}
