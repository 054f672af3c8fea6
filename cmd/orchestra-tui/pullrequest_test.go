package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// A task whose pull request is open shows it and its checks in status,
// in the table and in --json, as the engine's last poll recorded it.
func TestStatusShowsThePullRequest(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	id := moveTo(t, root, "in review on the forge", task.StatePullOpen, &verify.Verdict{Status: verify.StatusOK, Passed: 4, Counted: true})
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	ctx := context.Background()
	tk, err := st.TaskGet(ctx, id)
	require.NoError(t, err)
	data, _ := json.Marshal(task.PullData{Number: 12, URL: "https://github.com/team/app/pull/12", Open: true, Checks: "failure"})
	next := tk
	next.UpdatedAt = time.Now()
	require.NoError(t, st.TaskUpdate(ctx, store.TaskUpdateParams{Task: next, ExpectState: tk.State, Events: []task.Event{
		{ID: task.NewULID(time.Now()), TaskID: id, Kind: task.EvPullUpdated, Text: "Pull request #12 is open: checks failure.", Data: data, At: time.Now()}}}))
	require.NoError(t, st.Close())

	code, stdout, stderr := cli(t, "status", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "pr-open PR #12 ✗")

	code, stdout, stderr = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct {
		ID string
		PR *task.PullData
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.Len(t, rows, 1)
	require.NotNil(t, rows[0].PR, stdout)
	require.Equal(t, 12, rows[0].PR.Number)
	require.Equal(t, "failure", rows[0].PR.Checks)
	require.True(t, strings.HasSuffix(rows[0].PR.URL, "/pull/12"))
}
