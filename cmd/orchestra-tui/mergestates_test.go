package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// moveTo adds a task with the CLI and moves it, in the store, to state s
// with verdict v, as the engine would have left it.
func moveTo(t *testing.T, root, title string, s task.State, v *verify.Verdict) task.ID {
	t.Helper()
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", title, "--goal", "g", "--verify", "true", "--harness", "shell")
	require.Equal(t, 0, code, stderr)
	id := task.ID(strings.TrimSpace(stdout))
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	tk, err := st.TaskGet(ctx, id)
	require.NoError(t, err)
	if v != nil {
		require.NoError(t, st.VerdictInsert(ctx, store.VerdictRecord{TaskID: id, Phase: tk.Phase, Verdict: *v}))
	}
	next := tk
	next.State, next.UpdatedAt, next.Branch = s, time.Now(), "orchestra/"+string(id)
	require.NoError(t, st.TaskUpdate(ctx, store.TaskUpdateParams{Task: next, ExpectState: tk.State}))
	return id
}

// status never shows ✓ beside a failed task and labels a baseline verdict
// as one; a merged task says merged, in the table and in --json.
func TestStatusSaysWhatStatesMean(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	baseline := &verify.Verdict{Status: verify.StatusOK, Passed: 3, Counted: true, Detail: verify.BaselineDetail}
	failedID := moveTo(t, root, "failed after a green baseline", task.StateFailed, baseline)
	greenFailed := moveTo(t, root, "failed after a green run", task.StateFailed, &verify.Verdict{Status: verify.StatusOK, Passed: 3, Counted: true})
	mergedID := moveTo(t, root, "merged by the queue", task.StateMerged, &verify.Verdict{Status: verify.StatusOK, Passed: 4, Counted: true})

	code, stdout, stderr := cli(t, "status", "-C", root)
	require.Equal(t, 0, code, stderr)
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, string(failedID)) || strings.Contains(l, string(greenFailed)) {
			require.NotContains(t, l, "✓", "no ✓ beside a failed task: %q", l)
		}
		if strings.Contains(l, string(failedID)) {
			require.Contains(t, l, "baseline · tests green before any change (3 passed)")
		}
		if strings.Contains(l, string(mergedID)) {
			require.Contains(t, l, "merged")
		}
	}

	code, stdout, stderr = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct{ ID, State, Verdict string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	byID := map[string]struct{ ID, State, Verdict string }{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	require.Equal(t, "merged", byID[string(mergedID)].State)
	require.Equal(t, "✗ failed · its last verify: ok · tests green (3 passed)", byID[string(greenFailed)].Verdict)
	require.NotContains(t, byID[string(failedID)].Verdict, "✓")
}

// With [finalise] queue set and no engine running, approve puts the task
// in the merge queue and merge refuses to go around it.
func TestApproveAndMergeOfflineGoThroughTheQueue(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[finalise]\nqueue = true\n"), 0o644))
	id := moveTo(t, root, "green, waiting", task.StateAwaitingReview, &verify.Verdict{Status: verify.StatusOK})
	code, _, stderr := cli(t, "merge", "-C", root, id.Short())
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "approve it first")

	code, stdout, stderr := cli(t, "approve", "-C", root, id.Short())
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "queued for merge")
	code, stdout, _ = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, `"state": "merge-queued"`)

	code, _, stderr = cli(t, "merge", "-C", root, id.Short())
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "already in the merge queue")
}
