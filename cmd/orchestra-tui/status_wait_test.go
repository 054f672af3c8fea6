package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// status says why a queued task waits, in the console's words
// (coord.AttentionAt): with an engine running, the engine's flag (here: no
// slot runs its harness); with none, that nothing places it until one runs.
func TestStatusSaysWhyAQueuedTaskWaits(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "Waits", "--goal", "g", "--verify", "true", "--pipeline", "implement")
	require.Equal(t, 0, code, stderr)
	id := task.ID(strings.TrimSpace(stdout))

	code, stdout, stderr = cli(t, "status", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "the queued task waits for an engine, and none runs here: `orchestra-tui` starts one\n", stdout)

	// No slot runs the scripted harness: the engine flags the task
	// unplaceable and records the refusal.
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[[slots]]\nname = \"only-shell\"\nharness = \"shell\"\ncapacity = 1\n"), 0o644))
	e, err := engine.Start(context.Background(), engine.Params{Dir: root, Version: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	// The refusal is recorded as the flag is set; a command after it goes
	// through the engine's loop, which publishes the flag before it takes
	// the next command. The refusal may precede the subscription: the
	// ledger has it then.
	notices, unsub := e.Subscribe()
	defer unsub()
	refused := func() bool {
		for _, s := range ledgerTexts(t, root) {
			if strings.Contains(s, "no slot runs harness scripted") {
				return true
			}
		}
		return false
	}
	for !refused() {
		n, ok := <-notices
		require.True(t, ok, "the engine stopped")
		if n.Event != nil && n.Event.Kind == task.EvRefusal && n.Event.TaskID == id {
			break
		}
	}
	_, err = e.Do(context.Background(), coord.Command{Kind: coord.CmdApprove, TaskID: id})
	require.Error(t, err, "a queued task is not approved")

	code, stdout, stderr = cli(t, "status", "-C", root)
	require.Equal(t, 0, code, stderr)
	want := id.Short() + " ⚑ Unplaceable: no slot runs harness scripted."
	require.Contains(t, stdout, want, stdout)
	require.NotContains(t, stdout, "wait for an engine", stdout)

	code, stdout, stderr = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct{ ID, Waiting string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows), stdout)
	require.Len(t, rows, 1)
	require.Equal(t, "Unplaceable: no slot runs harness scripted.", rows[0].Waiting)
}
