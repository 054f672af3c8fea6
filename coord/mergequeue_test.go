package coord

import (
	"context"
	"encoding/json"
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

// queueCheck is the verify command of the merge queue tests: two "tests"
// in go test's words. TestThreeWithOne fails when three.txt still uses the
// old API that one.txt removes; TestNoMarkers fails on conflict markers.
const queueCheck = `#!/bin/sh
fail=0
if [ -f one.txt ] && grep -q old three.txt 2>/dev/null; then
	echo "--- FAIL: TestThreeWithOne (0.00s)"; fail=1
else
	echo "--- PASS: TestThreeWithOne (0.00s)"
fi
if grep -q '<<<<<<<' f.txt; then echo "--- FAIL: TestNoMarkers (0.00s)"; fail=1; else echo "--- PASS: TestNoMarkers (0.00s)"; fi
exit $fail
`

// queueHarness adds harness name running the scripted agent on its own
// script, so each task of a test does its own edits.
func queueHarness(t *testing.T, c *config.Config, name string, edits ...agent.Edit) string {
	t.Helper()
	dir := t.TempDir()
	zero := 0
	sc := agent.Script{PaceMS: &zero, RecordDir: dir, Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: edits}},
	}}
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	path := filepath.Join(dir, "script.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	h := c.Harness["scripted"]
	h.Argv = append(append([]string(nil), h.Argv[:len(h.Argv)-1]...), path)
	c.Harness[name] = h
	return dir
}

// operatorFiles hashes the operator's checkout, git's and orchestra's own
// directories aside.
func operatorFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	all := treeHashes(t, root)
	for p := range all {
		if p == ".git" || strings.HasPrefix(p, ".git/") || p == ".orchestra" || strings.HasPrefix(p, ".orchestra/") {
			delete(all, p)
		}
	}
	return all
}

// Three approved tasks through the queue, with real git, the scripted
// agent and a real verify command: the first lands; the second conflicts
// with it, goes back to implement by itself, is rebuilt on the new base and
// lands once approved again; the third is green on its branch but red with
// the first merged, so it goes back to implement with the failing test
// named. The base only ever holds green trees, and the operator's dirty
// checkout (on another branch) is byte-identical afterwards.
func TestMergeQueueLandsOnlyGreenTreesAndSendsTheRestBack(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	require.NoError(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "check.sh"), []byte(queueCheck), 0o755))
	require.NoError(t, project.Git(root, "add", "-A"))
	require.NoError(t, project.Git(root, "commit", "-qm", "f.txt and its check"))
	start := strings.TrimSpace(gitOut(t, root, "rev-parse", "main"))
	// The operator works on a branch of their own, with changes they
	// have not committed.
	require.NoError(t, project.Git(root, "switch", "-q", "-c", "wip"))
	require.NoError(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("# my draft, not committed\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("untracked\n"), 0o644))
	mine := operatorFiles(t, root)
	status := gitOut(t, root, "status", "--porcelain=v1", "--untracked-files=all")

	var rec2, rec3 string
	b := setupIn(t, root, agent.Script{}, func(c *config.Config) {
		c.Finalise.Queue, c.Finalise.Base = true, "main"
		queueHarness(t, c, "s1", agent.Edit{Path: "f.txt", Content: "one\nTWO by 1\nthree\n"}, agent.Edit{Path: "one.txt", Content: "the new API\n"})
		rec2 = queueHarness(t, c, "s2", agent.Edit{Path: "f.txt", Content: "one\nTWO by 1, and by 2\nthree\n"})
		rec3 = queueHarness(t, c, "s3", agent.Edit{Path: "three.txt", Content: "uses the old API\n"})
	}, nil, nil)
	impl := task.Pipeline{task.PhaseImplement}
	ids := []task.ID{b.addTask(t, "s1", "sh check.sh", impl), b.addTask(t, "s2", "sh check.sh", impl), b.addTask(t, "s3", "sh check.sh", impl)}
	awaiting := map[task.ID]bool{}
	for len(awaiting) < 3 {
		ev := b.waitEvent(t, 3*time.Minute, func(e task.Event) bool { return ended(e) })
		require.Equal(t, task.EvTaskAwaiting, ev.Kind, b.dump())
		awaiting[ev.TaskID] = true
	}
	ctx := context.Background()
	for _, id := range ids {
		res, err := b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: id, Author: "ana"})
		require.NoError(t, err)
		require.Contains(t, res.Message, "queued for merge")
	}
	b.barrier(t)
	require.Equal(t, task.StateMergeQueued, b.taskView(t, ids[2]).Task.State, "approving queues the task; events:\n%s", b.dump())

	returned := map[task.ID]task.Event{}
	var merged1 task.Event
	for merged1.ID == "" || len(returned) < 2 {
		ev := b.waitEvent(t, 3*time.Minute, func(e task.Event) bool {
			return e.Kind == task.EvBranchMerged || e.Kind == task.EvMergeReturned
		})
		switch {
		case ev.Kind == task.EvBranchMerged && ev.TaskID == ids[0]:
			merged1 = ev
		case ev.Kind == task.EvMergeReturned:
			returned[ev.TaskID] = ev
		default:
			t.Fatalf("unexpected %s of %s; events:\n%s", ev.Kind, ev.TaskID, b.dump())
		}
	}
	require.Contains(t, merged1.Text, "by fast-forward")
	require.Contains(t, merged1.Text, "(on wip) was not touched")
	require.Equal(t, task.ReasonMergeConflict, returned[ids[1]].Reason)
	require.Contains(t, returned[ids[1]].Text, "conflicts in f.txt")
	require.Contains(t, returned[ids[1]].Text, "no attempt charged")
	require.Equal(t, task.ReasonIntegrationRed, returned[ids[2]].Reason)
	require.Contains(t, returned[ids[2]].Text, "TestThreeWithOne", "the failing test is named")
	require.Contains(t, returned[ids[2]].Text, "no attempt charged")

	// The third's next session is briefed with the new base and the test.
	require.Eventually(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(rec3, "brief-implement-*.md"))
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), "TestThreeWithOne") && strings.Contains(string(data), "main") {
				return true
			}
		}
		return false
	}, 2*time.Minute, 50*time.Millisecond, "no brief of the third names the failing test; events:\n%s", b.dump())
	require.Equal(t, task.PhaseImplement, b.taskView(t, ids[2]).Task.Phase, "the third is back in implement")
	_, err := b.c.Do(ctx, Command{Kind: CmdCancel, TaskID: ids[2]})
	require.NoError(t, err)

	// The second is rebuilt on the new base by itself: the agent resolves
	// the conflict the console left in its worktree; approved again, it lands.
	ev := b.waitEvent(t, 3*time.Minute, func(e task.Event) bool { return e.TaskID == ids[1] && ended(e) })
	require.Equal(t, task.EvTaskAwaiting, ev.Kind, b.dump())
	rebuilt := false
	briefs, _ := filepath.Glob(filepath.Join(rec2, "brief-implement-*.md"))
	for _, f := range briefs {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		rebuilt = rebuilt || strings.Contains(string(data), "merging main (at ") && strings.Contains(string(data), "conflict markers in f.txt")
	}
	require.True(t, rebuilt, "the second's rebuild was briefed with the new base and the conflicting file (briefs %v)", briefs)
	_, err = b.c.Do(ctx, Command{Kind: CmdApprove, TaskID: ids[1], Author: "ana"})
	require.NoError(t, err)
	ev = b.waitEvent(t, 3*time.Minute, func(e task.Event) bool {
		return e.TaskID == ids[1] && (e.Kind == task.EvBranchMerged || e.Kind == task.EvMergeReturned)
	})
	require.Equal(t, task.EvBranchMerged, ev.Kind, b.dump())
	b.barrier(t)
	require.Equal(t, task.StateMerged, b.taskView(t, ids[0]).Task.State)
	require.Equal(t, task.StateMerged, b.taskView(t, ids[1]).Task.State)

	// The base has the first and the second, and nothing of the third.
	require.Equal(t, "one\nTWO by 1, and by 2\nthree\n", gitShow(t, root, "main", "f.txt"))
	require.Equal(t, "the new API\n", gitShow(t, root, "main", "one.txt"))
	require.Error(t, exec.Command("git", "-C", root, "cat-file", "-e", "main:three.txt").Run(), "the red third never landed")
	// Every tree the base held since is green.
	for _, sha := range strings.Fields(gitOut(t, root, "rev-list", "--first-parent", start+"..main")) {
		dir := t.TempDir()
		out, err := exec.Command("sh", "-c", "git -C "+root+" archive "+sha+" | tar -x -C "+dir).CombinedOutput()
		require.NoError(t, err, string(out))
		cmd := exec.Command("sh", "check.sh")
		cmd.Dir = dir
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, "main at %s is red: %s", sha, out)
	}
	require.Equal(t, mine, operatorFiles(t, root), "the operator's checkout is byte-identical")
	require.Equal(t, status, gitOut(t, root, "status", "--porcelain=v1", "--untracked-files=all"), "and its index as it was")
	require.Equal(t, "wip", strings.TrimSpace(gitOut(t, root, "symbolic-ref", "--short", "HEAD")))
}
